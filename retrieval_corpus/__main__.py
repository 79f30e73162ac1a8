"""CLI: `python -m retrieval_corpus build [--force]`, `query TEXT [-k N] [--category C]`, `list`."""

from __future__ import annotations

import argparse
import json

from retrieval_corpus.corpus import CATEGORIES, load_examples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m retrieval_corpus", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    build = sub.add_parser("build", help="build or refresh the persistent Chroma index (offline)")
    build.add_argument("--persist-dir", default=None, help="index directory (default: $KERNELGRAPH_INDEX_DIR "
                       "or ~/.cache/kernelgraph/retrieval_index)")
    build.add_argument("--force", action="store_true", help="rebuild even if the content hash matches")
    query = sub.add_parser("query", help="print the top-k examples for a query")
    query.add_argument("text")
    query.add_argument("-k", type=int, default=3)
    query.add_argument("--category", choices=CATEGORIES, default=None)
    query.add_argument("--mode", choices=("hybrid", "dense", "keyword"), default="hybrid")
    query.add_argument("--persist-dir", default=None)
    sub.add_parser("list", help="list the examples with category and measured speedup")
    args = parser.parse_args(argv)

    if args.cmd == "list":
        for e in load_examples():
            speedup = f"{e.speedup:.2f}x" if e.speedup is not None else "-"
            verdict = e.measured["verdict"] if e.measured else "unmeasured"
            print(f"{e.category:15s} {e.id:50s} {verdict:14s} {speedup}")
        return 0

    from retrieval_corpus.index import CorpusIndex, build_index

    if args.cmd == "build":
        print(json.dumps(build_index(args.persist_dir, force=args.force), indent=2))
        return 0
    index = CorpusIndex(args.persist_dir)
    for hit in index.search(args.text, k=args.k, category=args.category, mode=args.mode):
        print(f"{hit['score']:.3f}  {hit['category']:15s} {hit['id']}  -  {hit['title']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
