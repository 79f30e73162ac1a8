"""Region contracts: the model writes kernels, the framework writes everything else.

A problem's reference is traced with torch.fx on meta tensors (no GPU, no LLM), its graph cut into regions
of one kind each (map, reduce, contraction, kept), and each offered region rendered as a contract: the
region as idiomatic PyTorch, what each op means, every tensor's shape, and a kernel skeleton the framework
owns (prelude, signature, loop, index, accessors). The model completes the body; NVRTC and a lint check it
locally. torch and the standard library only, so a GPU host can trace and assemble too.
"""
