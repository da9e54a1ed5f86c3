"""Peak resident memory per input byte, nbtok side by side with its peers (issue 23).

PeakMemoryPerByte.track_peak_rss_per_byte
    Each cell runs ``scripts/bench_memory.py``'s child in a fresh subprocess (capped with
    ``RLIMIT_AS``): load the model, warm up, build the input, encode it once, and report
    (peak ``ru_maxrss`` - resident set before the encode) / input bytes. Inputs are smaller
    than the script's defaults (one 20 MB string, 400,000 short documents) to keep a run
    short; the per-byte figure barely moves with size. Unit: bytes per input byte.
"""
import importlib.util

from . import _common as common

STRING_MB = 20
DOCS = 400_000


def _script():
    path = common.REPO_ROOT / "scripts" / "bench_memory.py"
    if not path.is_file():
        raise NotImplementedError("scripts/bench_memory.py is absent (an older commit)")
    spec = importlib.util.spec_from_file_location("nbtok_bench_memory", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class PeakMemoryPerByte:
    params = (["bytelevel", "spm_bpe", "spm_unigram", "json_t5", "json_minilm"], ["string", "docs"],
              ["nbtok", "peer"])
    param_names = ["model", "input", "library"]
    timeout = 1800
    number = 1
    repeat = 1

    def setup(self, model, kind, library):
        self.M = _script()
        loader, peer, rel = self.M.MODELS[model]
        if not (self.M.data_dir() / "models" / rel).is_file():
            raise NotImplementedError(f"{rel} is absent")
        self.lib = "nbtok" if library == "nbtok" else peer
        if self.lib != "nbtok":
            common.peer_or_skip(peer)

    def track_peak_rss_per_byte(self, model, kind, library):
        size = STRING_MB if kind == "string" else DOCS
        r = self.M.run_cell(self.lib, model, kind, size, cap_gb=8, timeout=1500)
        if "error" in r:
            raise NotImplementedError(r["error"])
        return r["per_byte"]

    track_peak_rss_per_byte.unit = "bytes/byte"
