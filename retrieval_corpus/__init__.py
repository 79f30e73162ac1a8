"""Original, GPU-validated CUDA examples and the Chroma index over them (see `retrieval_corpus.index`).

Kept import-free: `retrieval_corpus.validate` runs on GPU hosts without chromadb or langchain.
"""
