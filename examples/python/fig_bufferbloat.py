#!/usr/bin/env python3
"""Bufferbloat, from Python: CUBIC alone and CUBIC with the delay-correlation limiter
(Nowlan 2014, ch. 3) into a 10 Mbit/s bottleneck with a 1000-packet drop-tail queue.

  (a) RTT over time of the two scenario files, one run each;
  (b) a sweep over the bottleneck rate: mean RTT ± 95 % CI across 5 seeds (2 ms of
      random link jitter makes the seeds differ).

    python examples/python/fig_bufferbloat.py [OUT.png]     # default: target/fig_bufferbloat.png

Needs the brisk package (pip install ./python) and matplotlib; a few seconds on 2 cores.
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import brisk  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CUBIC = ROOT / "scenarios/bufferbloat-cubic.toml"
CUBIC_DC = ROOT / "scenarios/bufferbloat-cubic-dc.toml"
STYLE = {False: dict(label="CUBIC", color="tab:red", marker="o"),
         True: dict(label="CUBIC + delay correlation", color="tab:blue", marker="s")}

out = Path(sys.argv[1] if len(sys.argv) > 1 else "target/fig_bufferbloat.png")

# (a) One run of each scenario file: the RTT samples, averaged per 100 ms interval.
runs = {False: brisk.run(CUBIC), True: brisk.run(CUBIC_DC)}

# (b) The same scenario over a grid: rate × delay correlation, five seeds per cell.
rates = [5, 10, 20]
sw = brisk.sweep(
    CUBIC,
    grid={
        "bottleneck.rate": [f"{r}Mbit" for r in rates],
        "bottleneck.jitter.max": ["2ms"],
        "flow[0].tcp.delay_correlation": [False, True],
    },
    seeds=range(5),
    progress=False,
)
s = sw.summary

fig, (ax_t, ax_s) = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True,
                                 sharey=True)

for dc, r in runs.items():
    st = STYLE[dc]
    f = r.flows.iloc[0]
    ax_t.plot(r.rtt.time_s, r.rtt.mean_ms, color=st["color"],
              label=f"{st['label']}: mean {f['rtt_ms.mean']:.0f} ms, "
                    f"{f['goodput_bps'] / 1e6:.2f} Mbit/s")
ax_t.set(yscale="log", xlabel="time (s)", ylabel="RTT (ms, log scale)",
         title="(a) RTT over time, 10 Mbit/s, 10 ms base RTT", xlim=(0, None))
ax_t.grid(True, which="both", alpha=0.3)
ax_t.legend(loc="center right", fontsize=9)

col = "flow[0].tcp.delay_correlation"
for dc in (False, True):
    d = s[s[col] == dc].copy()
    d["mbit"] = d["bottleneck.rate"].str.removesuffix("Mbit").astype(float)
    d = d.sort_values("mbit")
    st = STYLE[dc]
    ax_s.errorbar(d.mbit, d["rtt_ms.mean.mean"], yerr=d["rtt_ms.mean.ci95"], capsize=4,
                  color=st["color"], marker=st["marker"], label=st["label"])
ax_s.set(xscale="log", xlabel="bottleneck rate (Mbit/s, log scale)",
         ylabel="mean RTT (ms, log scale)",
         title=f"(b) sweep: mean ± 95 % CI over {len(sw.seeds)} seeds, 2 ms link jitter")
ax_s.yaxis.set_tick_params(labelleft=True)
ax_s.set_xticks(rates, [str(r) for r in rates])
ax_s.minorticks_off()
ticks = [10, 20, 50, 100, 200, 500, 1000, 2000]
ax_t.set_yticks(ticks, [str(t) for t in ticks])
ax_t.set_ylim(10, 2000)
ax_s.grid(True, which="both", alpha=0.3)
ax_s.legend(fontsize=9)

fig.suptitle("Bufferbloat: 1000-packet drop-tail queue, one bulk flow, 20 s simulated")
out.parent.mkdir(parents=True, exist_ok=True)
fig.savefig(out, dpi=130)
print(f"wrote {out}")
print(s[["bottleneck.rate", col, "rtt_ms.mean.mean", "rtt_ms.mean.ci95"]].to_string(index=False))
