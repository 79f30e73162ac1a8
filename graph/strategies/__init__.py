"""The four strategy graphs; each module wires nodes and holds no logic of its own."""
