"""A small PyTorch transformer that runs compiled RASP models from their safetensors files."""
