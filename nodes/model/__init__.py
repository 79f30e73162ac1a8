"""The model layer: the one shared llama.cpp model (llm), where its GGUF comes from (source), the embedded
model's assembly from part wheels (store) and a LangChain chat-model face over it (chat)."""
