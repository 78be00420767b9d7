#!/usr/bin/env python3
"""ns-3 peer of `brisk bench scale`: N bulk CUBIC flows through one bottleneck.

sender -> router -> receiver, as bufferbloat.py (the `bench sim` twin), with N
BulkSend applications on the sender and N sinks on the receiver (brisk gives each flow
its own pair of hosts behind unlimited-rate access links; here the flows share a
100 Gbit/s access link, which carries the same packets at the same times to within its
serialisation). Every flow starts at 0 and has the same send buffer as brisk's: its
share of twice the path's BDP plus queue, between 64 KB and 4 MiB.

Modelling choice (helper ns3load): the shared access link's device queue holds every
flow's whole send buffer (N x (send buffer / MSS + 2) packets), so it never drops.
brisk's access links have no rate limit and no queue; the only drops are meant to be
at the bottleneck. With PointToPointHelper's default queue (a DropTailQueue of 100
packets) and no queue disc, the N SYNs sent at t = 0 met a full device queue and the
traffic-control layer dropped all but 101 of them, and again at the 1-s retry: 202 of
1000 flows got data, against brisk's 1000. The sender's drops are counted and printed
(`sender_drops`, 0 with this queue) so the match can be checked.

With --bytes B each flow sends B bytes and stops (brisk's `bench scale --bytes`), with
brisk's default 4 MiB send buffer.

Usage: scale.py --flows N [--rate 1Gbps] [--rtt-ms 10] [--queue 1000] [--duration 2] [--bytes B]
       [--seed S]
Prints one JSON object: flows, active (flows that received data), done (flows that
received all of --bytes), rx_bytes, goodput_bps (all bytes received over the
duration), events (ns-3's executed events), wall_s (Simulator::Run only, without the
slow import and the set-up), sender_drops (packets dropped on the shared sender node:
its device queue and its traffic-control layer), bottleneck_drops (the router's).
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
parser.add_argument("--seed", type=int, default=1, help="ns-3's RngRun")
args = parser.parse_args()

from ns import ns  # noqa: E402  (slow import; after argument parsing)
import cppyy  # noqa: E402

# Drops counted in C++ (a Python callback per packet would slow the run). Without a
# queue disc, a packet meeting a stopped device queue (full: ns-3's flow control) is
# dropped by the traffic-control layer ("TcDrop"), not by the device queue.
cppyy.cppdef(
    """
    namespace brisk_scale {
      uint64_t tc_drops[2] = {0, 0};  // [sender, router]
      void OnTcDrop(int k, ns3::Ptr<const ns3::Packet>) { tc_drops[k]++; }
      void HookTc(ns3::Ptr<ns3::Node> n, int k) {
        n->GetObject<ns3::TrafficControlLayer>()->TraceConnectWithoutContext(
          "TcDrop", ns3::MakeBoundCallback(&OnTcDrop, k));
      }
      uint64_t QueueDrops(ns3::Ptr<ns3::NetDevice> d) {
        return ns3::DynamicCast<ns3::PointToPointNetDevice>(d)->GetQueue()->GetTotalDroppedPackets();
      }
    }
    """
)
counters = cppyy.gbl.brisk_scale

ns.RngSeedManager.SetRun(args.seed)
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
# Room for every flow's whole send buffer plus its SYN and FIN (see the docstring):
# bounded, and never reached, as brisk's access links never drop.
mss = 1448
per_flow = -(-min(sndbuf, args.bytes or sndbuf) // mss) + 2
access.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue(f"{args.flows * per_flow}p"))
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
counters.HookTc(nodes.Get(0), 0)
counters.HookTc(nodes.Get(1), 1)

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
sender_drops = int(counters.tc_drops[0]) + int(counters.QueueDrops(d1.Get(0)))
bottleneck_drops = int(counters.tc_drops[1]) + int(counters.QueueDrops(d2.Get(0)))
ns.Simulator.Destroy()
print(
    json.dumps(
        {
            "flows": args.flows,
            "active": sum(1 for r in rx if r > 0),
            "done": sum(1 for r in rx if args.bytes > 0 and r >= args.bytes),
            "rx_bytes": sum(rx),
            "goodput_bps": sum(rx) * 8 / args.duration,
            "events": events,
            "wall_s": wall,
            "sender_drops": sender_drops,
            "bottleneck_drops": bottleneck_drops,
        }
    )
)
