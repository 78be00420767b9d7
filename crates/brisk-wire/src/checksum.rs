//! Internet checksum (RFC 1071), with incremental update (RFC 1624).
