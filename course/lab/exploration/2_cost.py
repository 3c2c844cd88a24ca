# Full attention for T = 256 ... 4096: wall time (warm-up, then the median of 5 runs) and the T x T weights.
import matplotlib.pyplot as plt  # here, not in the setup cell: grading skips these cells
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

Ts, seconds, map_bytes = [256, 512, 768, 1536, 3072, 4096], [], []
threads = torch.get_num_threads()
torch.set_num_threads(1)  # one thread: times that follow the work, not the scheduler
try:
    for T in Ts:
        q = k = v = torch.randn(1, T, 64)
        scaled_dot_product_attention(q, k, v)  # warm-up: the first call pays for allocation
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            _, w = scaled_dot_product_attention(q, k, v)
            runs.append(time.perf_counter() - start)
        seconds.append(sorted(runs)[len(runs) // 2])
        map_bytes.append(w.element_size() * w.nelement())
        del w
    large = [(T, s) for T, s in zip(Ts, seconds) if T >= 512]
    slope = np.polyfit(np.log([T for T, _ in large]), np.log([s for _, s in large]), 1)[0]

    # Two rows sharing the T axis, each legend to the right of its plot (outside the data); constrained
    # layout makes room for the legends, so nothing overlaps and nothing is cut off.
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True, layout="constrained")
    a1.loglog(Ts, [s * 1e3 for s in seconds], "o-", label=f"measured (median of 5)\nslope {slope:.2f}")
    a1.loglog(Ts, [seconds[-1] * 1e3 * (T / Ts[-1]) ** 2 for T in Ts], "--", label="∝ T² (slope 2)")
    a1.set_ylabel("time (ms)")
    a2.loglog(Ts, [b / 1e6 for b in map_bytes], "o-", label="weights tensor (measured:\nelement_size · numel)")
    a2.loglog(Ts, [4 * T**2 / 1e6 for T in Ts], "--", label="4·T² bytes (formula)")
    a2.set_ylabel("weights map (MB)")
    a2.set_xlabel("T (tokens)")
    a2.set_xscale("log", base=2)  # one labelled tick per doubling of T, from the first T to the last
    doublings = [Ts[0] * 2**i for i in range(int(np.log2(Ts[-1] / Ts[0])) + 1)]
    a2.set_xticks(doublings, labels=[str(T) for T in doublings])
    a2.xaxis.set_minor_formatter(NullFormatter())
    for axis in (a1, a2):
        axis.yaxis.set_major_locator(LogLocator(base=10))  # decades only, written as plain numbers
        axis.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axis.yaxis.set_minor_formatter(NullFormatter())  # unlabelled minor ticks: no crowded labels
        axis.grid(True, which="major", alpha=0.3)
        axis.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    a1.set_title("Full attention: time and memory grow as T²")
    plt.show()
    for T, s, b in zip(Ts, seconds, map_bytes):
        print(f"T = {T:5d}: {s * 1e3:8.2f} ms, weights map {b / 1e6:8.2f} MB")
    print(f"fitted slope of time against T for T >= 512: {slope:.2f} (T² has slope 2)")
except Exception as err:
    print("scaled_dot_product_attention is not ready yet:", repr(err))
finally:
    torch.set_num_threads(threads)
