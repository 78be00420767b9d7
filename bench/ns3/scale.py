#!/usr/bin/env python3
"""ns-3 peer of `brisk bench scale`: N bulk CUBIC flows through one bottleneck.

sender -> router -> receiver, as bufferbloat.py (the `bench sim` twin), with N
BulkSend applications on the sender and N sinks on the receiver (brisk gives each flow
its own pair of hosts behind unlimited-rate access links; here the flows share a
100 Gbit/s access link, which carries the same packets at the same times to within its
serialisation). Every flow starts at 0 and has the same send buffer as brisk's: its
share of twice the path's BDP plus queue, between 64 KB and 4 MiB.

With --bytes B each flow sends B bytes and stops (brisk's `bench scale --bytes`), with
brisk's default 4 MiB send buffer.

Usage: scale.py --flows N [--rate 1Gbps] [--rtt-ms 10] [--queue 1000] [--duration 2] [--bytes B]
Prints one JSON object: flows, active (flows that received data), goodput_bps,
events (ns-3's executed events), wall_s (Simulator::Run only, without the slow import
and the set-up).
Requires the `ns3` Python wheel (pip install ns3).
"""
import argparse
import json
import time

parser = argparse.ArgumentParser()
parser.add_argument("--flows", type=int, required=True)
parser.add_argument("--rate", default="1Gbps")
parser.add_argument("--rate-bps", type=float, default=1e9)
parser.add_argument("--rtt-ms", type=float, default=10.0)
parser.add_argument("--queue", type=int, default=1000)
parser.add_argument("--duration", type=float, default=2.0)
parser.add_argument("--bytes", type=int, default=0)
args = parser.parse_args()

from ns import ns  # noqa: E402  (slow import; after argument parsing)

bdp_and_queue = int(args.rate_bps / 8 / 100) + args.queue * 1500
sndbuf = min(max(2 * bdp_and_queue // args.flows, 64 << 10), 4 << 20)
if args.bytes > 0:
    sndbuf = 4 << 20

ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpCubic"))
ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(sndbuf))
ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(6 << 20))
ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
ns.Config.SetDefault("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
# brisk's initial RTO (RFC 6298's 1 s): a SYN lost in the start-up storm is retried at
# 1 s, not at ns-3's default 3 s.
ns.Config.SetDefault("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.Seconds(1)))

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
tch = ns.TrafficControlHelper()
tch.Uninstall(d1)
tch.Uninstall(d2)
ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

sinks = []
for i in range(args.flows):
    port = 5001 + i
    sh = ns.PacketSinkHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
    )
    app = sh.Install(nodes.Get(2))
    app.Start(ns.Seconds(0.0))
    sinks.append(app)
    src = ns.BulkSendHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(i2.GetAddress(1), port).ConvertTo()
    )
    src.SetAttribute("MaxBytes", ns.UintegerValue(args.bytes))
    src.Install(nodes.Get(0)).Start(ns.Seconds(0.0))

ns.Simulator.Stop(ns.Seconds(args.duration))
t0 = time.monotonic()
ns.Simulator.Run()
wall = time.monotonic() - t0
rx = [ns.DynamicCast[ns.PacketSink](a.Get(0)).GetTotalRx() for a in sinks]
events = int(ns.Simulator.GetEventCount())
ns.Simulator.Destroy()
print(
    json.dumps(
        {
            "flows": args.flows,
            "active": sum(1 for r in rx if r > 0),
            "goodput_bps": sum(rx) * 8 / args.duration,
            "events": events,
            "wall_s": wall,
        }
    )
)
