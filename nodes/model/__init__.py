"""The model layer: the one shared llama.cpp model (llm), where its GGUF comes from (source) and the embedded
model's assembly from part wheels (store)."""
