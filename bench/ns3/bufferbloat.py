#!/usr/bin/env python3
"""ns-3 equivalent of brisk's `bench sim` scenario, for a wall-time and results comparison.

One CUBIC bulk flow: sender -> router -> receiver. The router's egress is the bottleneck
(rate, 1000-packet drop-tail, no AQM). Base RTT is split evenly over the two hops.
MSS 1448 with timestamps and SACK, like brisk's Linux-like defaults.

Usage: bufferbloat.py [--rate 1Gbps] [--rtt-ms 10] [--queue 1000] [--duration 20]
Prints one JSON object: goodput_bps, rtt_ms_mean, rtt_samples, wall_s, cpu_s (the
last two of `Simulator::Run` alone).
Requires the `ns3` Python wheel (pip install ns3).
"""
import argparse
import json
import time

parser = argparse.ArgumentParser()
parser.add_argument("--rate", default="1Gbps")
parser.add_argument("--rtt-ms", type=float, default=10.0)
parser.add_argument("--queue", type=int, default=1000)
parser.add_argument("--duration", type=float, default=20.0)
args = parser.parse_args()

from ns import ns  # noqa: E402  (slow import; after argument parsing)
import cppyy  # noqa: E402

# RTT samples are accumulated in C++: a Python callback per ACK would measure Python, not ns-3.
cppyy.cppdef(
    """
    namespace brisk_bench {
      double rtt_sum_s = 0; uint64_t rtt_n = 0;
      void OnRtt(ns3::Time, ns3::Time rtt) { rtt_sum_s += rtt.GetSeconds(); rtt_n++; }
      void Hook() {
        ns3::Config::ConnectWithoutContext(
          "/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/RTT", ns3::MakeCallback(&OnRtt));
      }
      ns3::EventId ScheduleHook(double at) { return ns3::Simulator::Schedule(ns3::Seconds(at), &Hook); }
    }
    """
)
bb = cppyy.gbl.brisk_bench

ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpCubic"))
ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(64 << 20))
ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(64 << 20))
ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
ns.Config.SetDefault("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))

nodes = ns.NodeContainer()
nodes.Create(3)
one_way = f"{args.rtt_ms / 4}ms"

access = ns.PointToPointHelper()
access.SetDeviceAttribute("DataRate", ns.StringValue("100Gbps"))
access.SetChannelAttribute("Delay", ns.StringValue(one_way))
bottleneck = ns.PointToPointHelper()
bottleneck.SetDeviceAttribute("DataRate", ns.StringValue(args.rate))
bottleneck.SetChannelAttribute("Delay", ns.StringValue(one_way))
bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue(f"{args.queue}p"))

d1 = access.Install(nodes.Get(0), nodes.Get(1))
d2 = bottleneck.Install(nodes.Get(1), nodes.Get(2))
stack = ns.InternetStackHelper()
stack.InstallAll()
addr = ns.Ipv4AddressHelper()
addr.SetBase(ns.Ipv4Address("198.18.1.0"), ns.Ipv4Mask("255.255.255.0"))
addr.Assign(d1)
addr.SetBase(ns.Ipv4Address("198.18.2.0"), ns.Ipv4Mask("255.255.255.0"))
i2 = addr.Assign(d2)
# Assign() installs a default queue disc (fq_codel); remove it so the device's drop-tail
# queue alone is the bottleneck buffer, as in brisk.
tch = ns.TrafficControlHelper()
tch.Uninstall(d1)
tch.Uninstall(d2)
ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

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
bb.ScheduleHook(0.000001)

ns.Simulator.Stop(ns.Seconds(args.duration))
t0, c0 = time.monotonic(), time.process_time()
ns.Simulator.Run()
wall, cpu = time.monotonic() - t0, time.process_time() - c0
sink = ns.DynamicCast[ns.PacketSink](sink_app.Get(0))
rx = sink.GetTotalRx()
ns.Simulator.Destroy()
print(
    json.dumps(
        {
            "goodput_bps": rx * 8 / args.duration,
            "rtt_ms_mean": (bb.rtt_sum_s / bb.rtt_n * 1000) if bb.rtt_n else None,
            "rtt_samples": int(bb.rtt_n),
            "wall_s": wall,
            "cpu_s": cpu,
        }
    )
)
