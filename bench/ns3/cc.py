#!/usr/bin/env python3
"""ns-3 twin of one row of `brisk bench ns3-cc`: one bulk flow with ns-3's model of a
congestion controller, on bufferbloat.py's path (sender -> router -> receiver, the
router's egress the bottleneck with a drop-tail queue and no AQM, base RTT split evenly
over the two hops), optionally with independent packet loss on the bottleneck.

MSS 1448, timestamps and SACK, initial window 10, minimum RTO 200 ms, 64 MB buffers,
as bufferbloat.py. ns3::TcpDctcp gets ECN on (no queue marks here, so it meets only
loss); ns3::TcpBbr gets pacing on (ns-3's BBR needs it).

Usage: cc.py --cc ns3::TcpCubic [--rate 20Mbps] [--rtt-ms 40] [--queue 1000]
             [--loss 0.01] [--duration 30] [--seed 1]
--seed sets ns-3's run number (RngSeedManager::SetRun; 1 is ns-3's default): it
changes the error model's draws on the lossy path. Nothing else in this script is
random (ns-3's TCP starts at sequence number 0), so the bufferbloat path gives the
same result for every seed.
--trace FILE also writes the socket's cwnd and ssthresh (segments), smoothed RTT and
last RTT sample (ms) every 10 ms as CSV (docs/cc-comparison.md's traces).
Prints one JSON object: goodput_bps, rtt_ms_mean, rtt_samples, rto_episodes (entries
into CA_LOSS), recoveries (entries into CA_RECOVERY), wall_s. Requires the
`ns3` Python wheel (pip install ns3).

Batch mode, for filling `brisk bench ns3-cc --ns3-cache` without paying the wheel's
import (minutes on a loaded machine) per run: `cc.py --batch [--parallel N] < jobs`,
each line of `jobs` one run's arguments plus `--out FILE`. The wheel is imported once,
then every run is a forked child (a fresh simulator each), which writes its JSON object
to FILE (via FILE.tmp, so a stopped batch leaves no partial file); up to N at once.
"""
import argparse
import json
import os
import shlex
import sys
import time


def parser():
    p = argparse.ArgumentParser()
    p.add_argument("--cc", required=True, help="an ns-3 TypeId, e.g. ns3::TcpCubic")
    p.add_argument("--rate", default="20Mbps")
    p.add_argument("--rtt-ms", type=float, default=40.0)
    p.add_argument("--queue", type=int, default=1000)
    p.add_argument("--loss", type=float, default=0.0)
    p.add_argument("--duration", type=float, default=30.0)
    p.add_argument("--seed", type=int, default=1, help="ns-3 run number (RngSeedManager::SetRun)")
    p.add_argument("--out", help="batch mode: write the JSON object to this file")
    p.add_argument(
        "--trace",
        help="write a CSV every 10 ms: time s, cwnd and ssthresh (segments), srtt and last RTT sample (ms)",
    )
    return p


if "--batch" in sys.argv[1:]:
    top = argparse.ArgumentParser()
    top.add_argument("--batch", action="store_true")
    top.add_argument("--parallel", type=int, default=1)
    batch = top.parse_args()
    jobs = [parser().parse_args(shlex.split(line)) for line in sys.stdin if line.strip()]
    for j in jobs:
        if not j.out:
            sys.exit(f"batch job without --out: {j}")
else:
    batch = None
    jobs = [parser().parse_args()]

from ns import ns  # noqa: E402  (slow import; after argument parsing)
import cppyy  # noqa: E402

cppyy.cppdef(
    """
    namespace brisk_cc {
      double rtt_sum_s = 0; uint64_t rtt_n = 0;
      uint64_t rto_n = 0, recovery_n = 0;
      void OnRtt(ns3::Time, ns3::Time rtt) { rtt_sum_s += rtt.GetSeconds(); rtt_n++; }
      void OnCongState(ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t s) {
        if (s == ns3::TcpSocketState::CA_LOSS) rto_n++;
        if (s == ns3::TcpSocketState::CA_RECOVERY) recovery_n++;
      }
      void Hook() {
        ns3::Config::ConnectWithoutContext(
          "/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/RTT", ns3::MakeCallback(&OnRtt));
        ns3::Config::ConnectWithoutContext(
          "/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/CongState", ns3::MakeCallback(&OnCongState));
      }
      ns3::EventId ScheduleHook(double at) { return ns3::Simulator::Schedule(ns3::Seconds(at), &Hook); }
      // --trace: the socket's window, ssthresh and RTTs, sampled every 10 ms.
      uint32_t tr_cwnd = 0, tr_ssth = 0; double tr_srtt = 0, tr_last = 0;
      std::vector<double> tr;
      void OnCwnd(uint32_t, uint32_t v) { tr_cwnd = v; }
      void OnSsth(uint32_t, uint32_t v) { tr_ssth = v; }
      void OnSrtt(ns3::Time, ns3::Time v) { tr_srtt = v.GetSeconds() * 1e3; }
      void OnLast(ns3::Time, ns3::Time v) { tr_last = v.GetSeconds() * 1e3; }
      void Sample() {
        tr.push_back(ns3::Simulator::Now().GetSeconds()); tr.push_back(tr_cwnd / 1448.0);
        tr.push_back(tr_ssth / 1448.0); tr.push_back(tr_srtt); tr.push_back(tr_last);
        ns3::Simulator::Schedule(ns3::MilliSeconds(10), &Sample);
      }
      void TraceHook() {
        const char* s = "/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/";
        ns3::Config::ConnectWithoutContext(std::string(s) + "CongestionWindow", ns3::MakeCallback(&OnCwnd));
        ns3::Config::ConnectWithoutContext(std::string(s) + "SlowStartThreshold", ns3::MakeCallback(&OnSsth));
        ns3::Config::ConnectWithoutContext(std::string(s) + "RTT", ns3::MakeCallback(&OnSrtt));
        ns3::Config::ConnectWithoutContext(std::string(s) + "LastRTT", ns3::MakeCallback(&OnLast));
        Sample();
      }
      void ScheduleTrace(double at) { ns3::Simulator::Schedule(ns3::Seconds(at), &TraceHook); }
    }
    """
)
cc = cppyy.gbl.brisk_cc


def run(args):
    """One simulation; returns its JSON object."""
    ns.RngSeedManager.SetRun(args.seed)
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue(args.cc))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(64 << 20))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(64 << 20))
    ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    ns.Config.SetDefault("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
    ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
    if args.cc == "ns3::TcpDctcp":
        ns.Config.SetDefault("ns3::TcpSocketBase::UseEcn", ns.StringValue("On"))
    if args.cc == "ns3::TcpBbr":
        ns.Config.SetDefault("ns3::TcpSocketState::EnablePacing", ns.BooleanValue(True))

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
    if args.loss > 0:
        # Independent loss of data packets on the bottleneck, at the receiver's device
        # (ACKs travel the other way and are not dropped), as brisk's `bernoulli` loss.
        em = ns.CreateObject[ns.RateErrorModel]()
        em.SetAttribute("ErrorRate", ns.DoubleValue(args.loss))
        em.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
        d2.Get(1).SetAttribute("ReceiveErrorModel", ns.PointerValue(em))
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
    cc.ScheduleHook(0.000001)
    if args.trace:
        cc.ScheduleTrace(0.000002)

    ns.Simulator.Stop(ns.Seconds(args.duration))
    t0 = time.monotonic()
    ns.Simulator.Run()
    wall = time.monotonic() - t0
    sink = ns.DynamicCast[ns.PacketSink](sink_app.Get(0))
    rx = sink.GetTotalRx()
    ns.Simulator.Destroy()
    if args.trace:
        with open(args.trace, "w") as f:
            f.write("t_s,cwnd_seg,ssthresh_seg,srtt_ms,last_rtt_ms\n")
            v = cc.tr
            for i in range(0, len(v), 5):
                f.write(f"{v[i]:.3f},{v[i+1]:.2f},{v[i+2]:.1f},{v[i+3]:.3f},{v[i+4]:.3f}\n")
    return {
        "goodput_bps": rx * 8 / args.duration,
        "rtt_ms_mean": (cc.rtt_sum_s / cc.rtt_n * 1000) if cc.rtt_n else None,
        "rtt_samples": int(cc.rtt_n),
        # Entries into CA_LOSS (retransmission timeouts) and CA_RECOVERY (fast
        # recoveries), from the socket's CongState trace.
        "rto_episodes": int(cc.rto_n),
        "recoveries": int(cc.recovery_n),
        "wall_s": wall,
    }


if batch is None:
    print(json.dumps(run(jobs[0])))
else:
    # Fork after the import: each child is a fresh simulator with the wheel loaded.
    running = {}
    failed = 0
    for j in jobs + [None] * batch.parallel:
        while running and (j is None or len(running) >= batch.parallel):
            pid, status = os.wait()
            done = running.pop(pid, None)
            if done is not None and status != 0:
                failed += 1
                print(f"failed ({status}): {done.cc} {done.out}", file=sys.stderr)
            if j is None:
                break
        if j is None:
            continue
        pid = os.fork()
        if pid == 0:
            try:
                res = json.dumps(run(j))
                with open(j.out + ".tmp", "w") as f:
                    f.write(res + "\n")
                os.rename(j.out + ".tmp", j.out)
                print(f"{time.strftime('%H:%M:%S')} {j.cc} -> {j.out}", file=sys.stderr, flush=True)
                os._exit(0)
            except BaseException as e:  # noqa: BLE001  (report and leave the child)
                print(f"{j.cc}: {e}", file=sys.stderr, flush=True)
                os._exit(1)
        running[pid] = j
    sys.exit(1 if failed else 0)
