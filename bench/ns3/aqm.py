#!/usr/bin/env python3
"""ns-3 side of `brisk repro aqm-vs-ns3`: one NewReno bulk flow through one AQM.

Topology as bench/ns3/bufferbloat.py: sender -> router -> receiver, the router's egress
is the bottleneck. The AQM is a queue disc on that egress, with a one-packet device
queue beneath it so the queue disc holds the backlog (as brisk's link queue does).
Base RTT is split evenly over the four one-way hops. MSS 1448, SACK and timestamps, and
an ACK for every segment (see DelAckCount below).

Usage: aqm.py --queue codel|pie|red|fq_codel [--rate 10Mbps] [--rtt-ms 50]
              [--duration 30] [--from 10] [--ecn]
Prints one JSON object over the window from `--from` to the end (the steady state,
past slow start): goodput_bps (payload), drops, marks, sojourn_ms {p50, p95, p99, mean}
of every packet the queue disc sent, wall_s.
Requires the `ns3` Python wheel (pip install ns3).
"""
import argparse
import json
import time

parser = argparse.ArgumentParser()
parser.add_argument("--queue", required=True, choices=["codel", "pie", "red", "fq_codel"])
parser.add_argument("--rate", default="10Mbps")
parser.add_argument("--rtt-ms", type=float, default=50.0)
parser.add_argument("--duration", type=float, default=30.0)
parser.add_argument("--from", dest="from_s", type=float, default=0.0)
parser.add_argument("--ecn", action="store_true")
args = parser.parse_args()

from ns import ns  # noqa: E402  (slow import; after argument parsing)
import cppyy  # noqa: E402

# Sojourn samples and the goodput window are kept in C++ (a Python callback per
# packet would dominate the run).
cppyy.cppdef(
    """
    namespace brisk_aqm {
      std::vector<double> sojourn_ms;
      double from_s = 0;
      void OnSojourn(ns3::Time t) {
        if (ns3::Simulator::Now().GetSeconds() >= from_s) sojourn_ms.push_back(t.GetSeconds() * 1e3);
      }
      void Hook(ns3::Ptr<ns3::QueueDisc> q) {
        q->TraceConnectWithoutContext("SojournTime", ns3::MakeCallback(&OnSojourn));
      }
      uint64_t rx_at_from = 0, drops_at_from = 0, marks_at_from = 0;
      void MarkFrom(ns3::Ptr<ns3::PacketSink> s, ns3::Ptr<ns3::QueueDisc> q) {
        rx_at_from = s->GetTotalRx();
        drops_at_from = q->GetStats().nTotalDroppedPackets;
        marks_at_from = q->GetStats().nTotalMarkedPackets;
      }
      void ScheduleFrom(double at, ns3::Ptr<ns3::PacketSink> s, ns3::Ptr<ns3::QueueDisc> q) {
        from_s = at;
        if (at <= 0) return;
        ns3::Simulator::Schedule(ns3::Seconds(at), &MarkFrom, s, q);
      }
    }
    """
)
aqm = cppyy.gbl.brisk_aqm

ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpNewReno"))
ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(64 << 20))
ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(64 << 20))
ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
# An ACK per segment: ns-3's NewReno grows by MSS²/cwnd per ACK, so with delayed ACKs
# it gains half a segment per RTT where Linux (and brisk), counting segments ACKed,
# gain one. With an ACK per segment (brisk's receiver too) both gain one.
ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
ns.Config.SetDefault("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
if args.ecn:
    ns.Config.SetDefault("ns3::TcpSocketBase::UseEcn", ns.StringValue("On"))

nodes = ns.NodeContainer()
nodes.Create(3)
one_way = f"{args.rtt_ms / 4}ms"
access = ns.PointToPointHelper()
access.SetDeviceAttribute("DataRate", ns.StringValue("100Gbps"))
access.SetChannelAttribute("Delay", ns.StringValue(one_way))
bottleneck = ns.PointToPointHelper()
bottleneck.SetDeviceAttribute("DataRate", ns.StringValue(args.rate))
bottleneck.SetChannelAttribute("Delay", ns.StringValue(one_way))
bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue("1p"))
d1 = access.Install(nodes.Get(0), nodes.Get(1))
d2 = bottleneck.Install(nodes.Get(1), nodes.Get(2))
stack = ns.InternetStackHelper()
stack.InstallAll()

tch = ns.TrafficControlHelper()
ecn = ns.BooleanValue(args.ecn)
if args.queue == "codel":
    tch.SetRootQueueDisc("ns3::CoDelQueueDisc", "Target", ns.StringValue("5ms"),
                         "Interval", ns.StringValue("100ms"), "UseEcn", ecn,
                         "MaxSize", ns.StringValue("1000p"))
elif args.queue == "pie":
    # Linux 3.17.4's constants and delay estimate (the departure rate), as brisk's PIE
    # (ns-3's defaults differ: 15 ms, 150 ms, timestamps).
    tch.SetRootQueueDisc("ns3::PieQueueDisc", "QueueDelayReference", ns.TimeValue(ns.MilliSeconds(20)),
                         "UseDequeueRateEstimator", ns.BooleanValue(True),
                         "Tupdate", ns.TimeValue(ns.MilliSeconds(30)), "A", ns.DoubleValue(0.125),
                         "B", ns.DoubleValue(1.25), "MaxBurstAllowance", ns.TimeValue(ns.MilliSeconds(100)),
                         "UseEcn", ecn, "MaxSize", ns.StringValue("1000p"))
elif args.queue == "red":
    tch.SetRootQueueDisc("ns3::RedQueueDisc", "MinTh", ns.DoubleValue(5), "MaxTh", ns.DoubleValue(15),
                         "LInterm", ns.DoubleValue(10), "QW", ns.DoubleValue(0.002),
                         "Gentle", ns.BooleanValue(True),
                         # Floyd's count spacing without ns-3's extra "wait" between
                         # drops, as brisk and Linux's sch_red.
                         "Wait", ns.BooleanValue(False), "UseEcn", ecn,
                         "MeanPktSize", ns.UintegerValue(1000),
                         "LinkBandwidth", ns.DataRateValue(ns.DataRate(args.rate)),
                         "LinkDelay", ns.TimeValue(ns.MilliSeconds(args.rtt_ms / 4)),
                         "MaxSize", ns.StringValue("1000p"))
else:
    tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "UseEcn", ecn)
addr = ns.Ipv4AddressHelper()
addr.SetBase(ns.Ipv4Address("198.18.1.0"), ns.Ipv4Mask("255.255.255.0"))
addr.Assign(d1)
addr.SetBase(ns.Ipv4Address("198.18.2.0"), ns.Ipv4Mask("255.255.255.0"))
i2 = addr.Assign(d2)
# Assign() installs a default queue disc (fq_codel) everywhere: remove them, then put
# the AQM on the bottleneck's egress (router -> receiver) only.
tch_none = ns.TrafficControlHelper()
tch_none.Uninstall(d1)
tch_none.Uninstall(d2)
qdiscs = tch.Install(d2.Get(0))
ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
qd = qdiscs.Get(0)
aqm.Hook(qd)

port = 5001
sink_helper = ns.PacketSinkHelper(
    "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
)
sink_app = sink_helper.Install(nodes.Get(2))
sink_app.Start(ns.Seconds(0.0))
src = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(i2.GetAddress(1), port).ConvertTo())
src.SetAttribute("MaxBytes", ns.UintegerValue(0))
src_app = src.Install(nodes.Get(0))
src_app.Start(ns.Seconds(0.0))
sink = ns.DynamicCast[ns.PacketSink](sink_app.Get(0))
aqm.ScheduleFrom(args.from_s, sink, qd)

ns.Simulator.Stop(ns.Seconds(args.duration))
t0 = time.monotonic()
ns.Simulator.Run()
wall = time.monotonic() - t0
rx = sink.GetTotalRx() - aqm.rx_at_from
stats = qd.GetStats()
drops = int(stats.nTotalDroppedPackets) - int(aqm.drops_at_from)
marks = int(stats.nTotalMarkedPackets) - int(aqm.marks_at_from)
ns.Simulator.Destroy()

s = sorted(aqm.sojourn_ms)


def pct(q):
    return s[min(len(s) - 1, round((len(s) - 1) * q))] if s else None


print(
    json.dumps(
        {
            "goodput_bps": rx * 8 / (args.duration - args.from_s),
            "drops": drops,
            "marks": marks,
            "sojourn_ms": {
                "p50": pct(0.5),
                "p95": pct(0.95),
                "p99": pct(0.99),
                "mean": sum(s) / len(s) if s else None,
            },
            "wall_s": wall,
        }
    )
)
