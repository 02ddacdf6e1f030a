"""Chapter 07, a real encoder (all-MiniLM-L6-v2): the chapters' questions asked of pretrained weights."""
