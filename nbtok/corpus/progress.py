"""A one-line progress report on stderr: shards, documents, MB/s, ETA."""
import sys
import time


class Progress:
    def __init__(self, enabled, n_shards, label="tokenizing"):
        self.enabled, self.n, self.label = enabled, n_shards, label
        self.done = self.docs = self.bytes = 0
        self.t0 = time.perf_counter()

    def update(self, rec):
        self.done += 1
        self.docs += rec.get("documents", 0)
        if not rec.get("skipped"):
            self.bytes += rec.get("input_bytes", 0)
        if not self.enabled:
            return
        dt = max(time.perf_counter() - self.t0, 1e-9)
        eta = dt / self.done * (self.n - self.done)
        sys.stderr.write(f"\r[nbtok] {self.label}: {self.done}/{self.n} shards, {self.docs:,} documents, "
                         f"{self.bytes / 1e6 / dt:,.1f} MB/s, ETA {eta:,.0f} s   ")
        if self.done == self.n:
            sys.stderr.write("\n")
        sys.stderr.flush()
