//! pcap writer, LINKTYPE_RAW (101): each record is a bare IP packet.
