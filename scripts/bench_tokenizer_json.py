"""tokenizer.json vs native file vs HF tokenizers, one thread, in one run (the asv suite
``asv_benchmarks/bench_tokenizer_json.py`` without asv). Prints MB/s and the ratios.

    python scripts/bench_tokenizer_json.py
"""
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from asv_benchmarks import bench_tokenizer_json as B  # noqa: E402


def best(fn, docs, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(docs)
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    print("| corpus | model | tokenizer.json MB/s | native MB/s | tokenizers MB/s | json / native | json / tokenizers |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for corpus in B.CORPORA:
        docs = B.documents(corpus)
        nbytes = sum(len(d.encode()) for d in docs)
        for model in B.MODELS:
            speed = {}
            for source in B.SOURCES:
                try:
                    fn = B.encoder(model, source)
                except NotImplementedError:   # asv's skip: no native file
                    continue
                fn(docs[:100])
                speed[source] = nbytes / best(fn, docs) / 1e6
            js, nat, hf = speed.get("tokenizer.json"), speed.get("native"), speed.get("tokenizers")
            cell = lambda v: f"{v:.2f}" if v else "-"  # noqa: E731
            print(f"| {corpus} | {model} | {cell(js)} | {cell(nat)} | {cell(hf)} | "
                  f"{f'{js / nat:.2f}x' if nat else '-'} | {js / hf:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
