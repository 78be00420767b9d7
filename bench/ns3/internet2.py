#!/usr/bin/env python3
"""ns-3 side of bench/ns3/compare.sh: brisk's Internet2 network scenario, replayed.

Builds the graph of brisk's `internet2` generator (crates/brisk-sim/src/topo_gen.rs):
10 routers (NYC CHI WDC ATL KSC HOU DEN SNV SEA LAX), its 13 router-router links,
`--hosts-per-router` hosts on each router, every link point-to-point at `--rate`,
`--hop-delay-ms` one way on router-router links and no delay on host links. Queues are
drop-tail queues in bytes: `--queue-bytes` on every router port (core and towards
hosts), `--host-queue-bytes` on each host's NIC. ns-3's default queue discs (fq_codel)
are replaced.

Routes are static and copy brisk's rule (crates/brisk-sim/src/graph.rs `routes`): least
total propagation delay, ties to fewer hops, then to the lower-numbered next node, then
the lower-numbered link; node order is routers as listed, then each router's hosts.

Drop-tail is modelled in one of two ways:
- the default: a `FifoQueueDisc` of that many bytes on each device, over a one-packet
  device queue. A packet is admitted when its own bytes fit, as in brisk, so a 60-byte
  SYN or ACK still enters a queue that a 1500-byte packet would overflow.
- `--device-queues`: the device queue itself, with ns-3's queue discs removed. ns-3's
  flow control then stops the device queue once it is within one MTU of full, and the
  traffic-control layer drops every packet that meets a stopped queue, small ones
  included.

Flows are not drawn here: `--flows` is the `flows.csv` that `brisk run --out DIR` wrote,
and every row is replayed: at `start_s` host `src` opens a TCP connection to host
`dst`:5001; once connected (the SYN-ACK received) it sends `size` bytes and closes.
FCT, as brisk's: from that moment (the handshake done, the first byte handed to TCP)
to the moment the sender's highest cumulative ACK covers the last data byte
(ns-3's ISN is 0, so the n-th data byte has sequence number n).

TCP: NewReno with ns-3's default PRR recovery, SACK, timestamps, window scaling, IW
`--iw` segments of 1448 payload bytes (brisk's MSS 1460 less the 12-byte timestamp
option: both put 1500-byte IP packets on the wire), an ACK for every segment, Nagle off,
min RTO 200 ms, SYN timeout 1 s (`ConnTimeout`; brisk's initial RTO), 8 MB send and receive buffers.

Prints one JSON object: flows, measured (not warm-up, per brisk's `warmup` column),
completed, mean_fct_s, byte_weighted_fct_s, wall_run_s and cpu_run_s (Simulator::Run
only: wall-clock and CPU seconds),
sim_s (simulated time at the end), events, router_drops and host_drops (packets
dropped at a router's output ports and at a host's NIC: by the traffic-control layer
at a stopped device queue, which is where ns-3 drops once the queue discs are gone),
device_queue_drops (packets the device queues themselves refused), qdisc_drops (by the
queue discs: the default mode's drops); with `--out FILE`, one row per flow
(id, size, warmup, first_byte_s, acked_s, fct_s).
Requires the `ns3` Python wheel (pip install ns3).
"""
import argparse
import csv
import heapq
import json
import time

ROUTERS = ["NYC", "CHI", "WDC", "ATL", "KSC", "HOU", "DEN", "SNV", "SEA", "LAX"]
LINKS = [
    ("NYC", "CHI"), ("NYC", "WDC"), ("CHI", "ATL"), ("CHI", "KSC"), ("ATL", "WDC"),
    ("ATL", "HOU"), ("KSC", "HOU"), ("KSC", "DEN"), ("DEN", "SNV"), ("DEN", "SEA"),
    ("SEA", "SNV"), ("SNV", "LAX"), ("LAX", "HOU"),
]

parser = argparse.ArgumentParser()
parser.add_argument("--flows", required=True, help="brisk's flows.csv")
parser.add_argument("--hosts-per-router", type=int, default=4)
parser.add_argument("--rate", default="100Mbps")
parser.add_argument("--hop-delay-ms", type=float, default=10.0)
parser.add_argument("--queue-bytes", type=int, default=500_000)
parser.add_argument("--host-queue-bytes", type=int, default=16_000_000)
parser.add_argument("--iw", type=int, default=4)
parser.add_argument("--duration", type=float, default=30.0, help="cap, simulated s")
parser.add_argument("--out", help="per-flow CSV")
parser.add_argument("--cc", default="TcpNewReno", choices=["TcpNewReno", "TcpLinuxReno"],
                    help="TcpLinuxReno grows cwnd per segment ACKed in congestion "
                    "avoidance, as Linux and brisk do")
parser.add_argument("--device-queues", action="store_true",
                    help="drop-tail in the device queues, no queue discs (see above)")
args = parser.parse_args()

# ---- the graph, in brisk's node and link order ------------------------------------
H = args.hosts_per_router
nodes = list(ROUTERS) + [f"{r}-h{i}" for r in ROUTERS for i in range(H)]
index = {n: i for i, n in enumerate(nodes)}
is_router = [i < len(ROUTERS) for i in range(len(nodes))]
hop_ns = round(args.hop_delay_ms * 1e6)
# Directed links (from, to, delay_ns), added in pairs as graph.rs `connect` does.
dlinks = []
for a, b in LINKS:
    dlinks += [(index[a], index[b], hop_ns), (index[b], index[a], hop_ns)]
for r in ROUTERS:
    for i in range(H):
        h = index[f"{r}-h{i}"]
        dlinks += [(h, index[r], 0), (index[r], h, 0)]
out_links = [[] for _ in nodes]
in_links = [[] for _ in nodes]
for l, (f, t, _) in enumerate(dlinks):
    out_links[f].append(l)
    in_links[t].append(l)
hosts = [i for i in range(len(nodes)) if not is_router[i]]


def shortest_to(t):
    """graph.rs `shortest_to`: (least delay, fewest hops) from every node to `t`."""
    inf = (float("inf"), float("inf"))
    dist = [inf] * len(nodes)
    dist[t] = (0, 0)
    heap = [(0, 0, t)]
    while heap:
        d, h, v = heapq.heappop(heap)
        if (d, h) > dist[v]:
            continue
        if v != t and not is_router[v]:
            continue  # hosts other than t do not forward
        for l in in_links[v]:
            u = dlinks[l][0]
            cand = (d + dlinks[l][2], h + 1)
            if cand < dist[u]:
                dist[u] = cand
                heapq.heappush(heap, (cand[0], cand[1], u))
    return dist


# next_link[m][k]: router m's out-link towards host ordinal k.
next_link = {m: {} for m in range(len(nodes)) if is_router[m]}
for k, t in enumerate(hosts):
    dist = shortest_to(t)
    for m in next_link:
        cands = [l for l in out_links[m]
                 if dist[dlinks[l][1]][0] != float("inf")
                 and (dlinks[l][1] == t or is_router[dlinks[l][1]])]
        if cands:
            next_link[m][k] = min(
                cands,
                key=lambda l: (dist[dlinks[l][1]][0] + dlinks[l][2],
                               dist[dlinks[l][1]][1] + 1, dlinks[l][1], l))

flows = []
with open(args.flows) as f:
    for row in csv.DictReader(f):
        flows.append(row)

from ns import ns  # noqa: E402  (slow import; after argument parsing)
import cppyy  # noqa: E402

# Per-flow state and callbacks live in C++: a Python callback per ACK would dominate.
cppyy.cppdef(
    """
    namespace brisk_i2 {
      struct Flow { uint32_t size; int64_t first_ns = -1, acked_ns = -1; };
      std::vector<Flow> flows;
      size_t done = 0;
      void OnAck(uint32_t id, ns3::SequenceNumber32, ns3::SequenceNumber32 now_acked) {
        Flow& f = flows[id];
        if (f.acked_ns < 0 && f.first_ns >= 0 && now_acked.GetValue() >= f.size + 1) {
          f.acked_ns = ns3::Simulator::Now().GetNanoSeconds();
          done++;
        }
      }
      void OnConnected(uint32_t id, ns3::Ptr<ns3::Socket> s) {
        flows[id].first_ns = ns3::Simulator::Now().GetNanoSeconds();
        s->Send(ns3::Create<ns3::Packet>(flows[id].size));
        s->Close();
      }
      void OnFailed(uint32_t, ns3::Ptr<ns3::Socket>) {}
      // Without a queue disc, a packet meeting a stopped device queue (full to within
      // one MTU: ns-3's flow control) is dropped by the traffic-control layer, not by
      // the device queue: count those per node kind.
      uint64_t tc_drops[2] = {0, 0};  // [host, router]
      void OnTcDrop(int router, ns3::Ptr<const ns3::Packet>) { tc_drops[router]++; }
      void HookTc(ns3::Ptr<ns3::Node> n, int router) {
        n->GetObject<ns3::TrafficControlLayer>()->TraceConnectWithoutContext(
          "TcDrop", ns3::MakeBoundCallback(&OnTcDrop, router));
      }
      void Open(uint32_t id, ns3::Ptr<ns3::Node> node, ns3::Ipv4Address dst) {
        auto s = ns3::Socket::CreateSocket(node, ns3::TcpSocketFactory::GetTypeId());
        s->Bind();
        s->TraceConnectWithoutContext("HighestRxAck", ns3::MakeBoundCallback(&OnAck, id));
        s->SetConnectCallback(ns3::MakeBoundCallback(&OnConnected, id),
                              ns3::MakeBoundCallback(&OnFailed, id));
        s->Connect(ns3::InetSocketAddress(dst, 5001));
      }
      void Add(uint32_t size, int64_t start_ns, ns3::Ptr<ns3::Node> node, ns3::Ipv4Address dst) {
        uint32_t id = flows.size();
        flows.push_back(Flow{size});
        ns3::Simulator::Schedule(ns3::NanoSeconds(start_ns), &Open, id, node, dst);
      }
      // Stop once every flow is ACKed, checked every 100 ms as brisk's run loop does.
      void Check() {
        if (done == flows.size()) { ns3::Simulator::Stop(); return; }
        ns3::Simulator::Schedule(ns3::MilliSeconds(100), &Check);
      }
    }
    """
)
i2 = cppyy.gbl.brisk_i2

ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::" + args.cc))
ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(8 << 20))
ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(8 << 20))
ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(args.iw))
ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
ns.Config.SetDefault("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(True))
ns.Config.SetDefault("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.Seconds(1)))
ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
ns.Config.SetDefault("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
ns.Config.SetDefault("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))
ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))

nc = ns.NodeContainer()
nc.Create(len(nodes))
ns.InternetStackHelper().InstallAll()
p2p = ns.PointToPointHelper()
p2p.SetDeviceAttribute("DataRate", ns.StringValue(args.rate))
addr = ns.Ipv4AddressHelper()
addr.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.252"))
tc_none = ns.TrafficControlHelper()


queues = []  # (queue, on a router-router link)


qdiscs = []  # queue discs (default mode)


def set_queue(dev, nbytes, core):
    pdev = ns.DynamicCast[ns.PointToPointNetDevice](dev)
    q = pdev.GetQueue()
    if args.device_queues:
        q.SetAttribute("MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{nbytes}B")))
    else:
        q.SetAttribute("MaxSize", ns.QueueSizeValue(ns.QueueSize("1p")))
        tch = ns.TrafficControlHelper()
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", ns.StringValue(f"{nbytes}B"))
        qdiscs.append(tch.Install(dev).Get(0))
    queues.append((q, core))


# One point-to-point link per undirected pair; remember each directed link's
# (interface index at its tail, address of its head).
hop = {}
for l in range(0, len(dlinks), 2):
    a, b, d = dlinks[l]
    p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(d)))
    devs = p2p.Install(nc.Get(a), nc.Get(b))
    ifs = addr.Assign(devs)
    addr.NewNetwork()
    tc_none.Uninstall(devs)
    for end, node in ((0, a), (1, b)):
        set_queue(devs.Get(end), args.queue_bytes if is_router[node] else args.host_queue_bytes,
                  is_router[a] and is_router[b])
    ia = nc.Get(a).GetObject[ns.Ipv4]().GetInterfaceForDevice(devs.Get(0))
    ib = nc.Get(b).GetObject[ns.Ipv4]().GetInterfaceForDevice(devs.Get(1))
    hop[l] = (ia, ifs.GetAddress(1))
    hop[l + 1] = (ib, ifs.GetAddress(0))

for i in range(len(nodes)):
    i2.HookTc(nc.Get(i), int(is_router[i]))

static = ns.Ipv4StaticRoutingHelper()
host_addr = []
for t in hosts:
    (l,) = out_links[t]
    iface, gw = hop[l]
    host_addr.append(hop[l + 1][1])  # the reverse link's head is this host
    static.GetStaticRouting(nc.Get(t).GetObject[ns.Ipv4]()).SetDefaultRoute(gw, iface)
for m, row in next_link.items():
    rt = static.GetStaticRouting(nc.Get(m).GetObject[ns.Ipv4]())
    for k, l in row.items():
        iface, gw = hop[l]
        rt.AddHostRouteTo(host_addr[k], gw, iface)

sink = ns.PacketSinkHelper(
    "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 5001).ConvertTo()
)
for t in hosts:
    sink.Install(nc.Get(t)).Start(ns.Seconds(0))

for r in flows:
    i2.Add(int(r["size"]), round(float(r["start_s"]) * 1e9),
           nc.Get(hosts[int(r["src"])]), host_addr[int(r["dst"])])
ns.Simulator.Schedule(ns.MilliSeconds(100), i2.Check)
ns.Simulator.Stop(ns.Seconds(args.duration))

t0, c0 = time.monotonic(), time.process_time()
ns.Simulator.Run()
wall, cpu = time.monotonic() - t0, time.process_time() - c0
sim_s = ns.Simulator.Now().GetSeconds()
events = int(ns.Simulator.GetEventCount())
queue_drops = sum(int(q.GetTotalDroppedPackets()) for q, _ in queues)
qdisc_drops = sum(int(q.GetStats().nTotalDroppedPackets) for q in qdiscs)

rows = []
for k, r in enumerate(flows):
    f = i2.flows[k]
    fct = (f.acked_ns - f.first_ns) / 1e9 if f.acked_ns >= 0 else None
    rows.append((int(r["id"]), int(r["size"]), r["warmup"] == "true",
                 f.first_ns / 1e9 if f.first_ns >= 0 else None,
                 f.acked_ns / 1e9 if f.acked_ns >= 0 else None, fct))
ns.Simulator.Destroy()

measured = [x for x in rows if not x[2]]
done = [x for x in measured if x[5] is not None]
size_done = sum(x[1] for x in done)
if args.out:
    with open(args.out, "w") as f:
        f.write("id,size,warmup,first_byte_s,acked_s,fct_s\n")
        for x in rows:
            f.write(",".join("" if v is None else (str(v).lower() if isinstance(v, bool) else str(v))
                             for v in x) + "\n")
print(json.dumps({
    "flows": len(rows),
    "measured": len(measured),
    "completed": len(done),
    "mean_fct_s": sum(x[5] for x in done) / len(done) if done else None,
    "byte_weighted_fct_s": sum(x[1] * x[5] for x in done) / size_done if done else None,
    "wall_run_s": wall,
    "cpu_run_s": cpu,
    "sim_s": sim_s,
    "events": events,
    "router_drops": int(i2.tc_drops[1]),
    "host_drops": int(i2.tc_drops[0]),
    "device_queue_drops": queue_drops,
    "qdisc_drops": qdisc_drops,
}))
