"""The runs tests/test_distributed.py trains in one process and under torchrun. A module of its own, so that each
torchrun rank imports only these few lines and what they train with, not the test module (pytest, the command line
and everything it loads)."""
from vrs_edu.lab.data import associative_recall, make_token_data
from vrs_edu.lab.train import TrainConfig, train
from vrs_edu.nn import TinyGPT, TinyGPTConfig

TEXT = "the cat sat on the mat. the dog sat on the log. " * 40
CASES = ("corpus", "recall_svformer_x0")


def run_case(name: str):
    """The runs compared: a corpus, and a masked synthetic task with a variant whose layers share one V (SVFormer)."""
    if name == "corpus":
        data = make_token_data(TEXT, "char", block_size=16)
        model = TinyGPT(TinyGPTConfig(vocab_size=data.vocab_size, d_model=32, n_layers=2, n_heads=2, block_size=16))
        cfg = TrainConfig(steps=6, batch_size=8, eval_every=3, eval_batches=3, warmup=2)
    else:  # SVFormer: every layer attends over V_1, whose gradient gathers from all layers; x0 enters layer 0's V_1
        # (x0 on a later SVFormer layer would build parameters nothing reads: the config refuses it)
        data = associative_recall(n_pairs=4, n_queries=2)
        model = TinyGPT(TinyGPTConfig(vocab_size=data.vocab_size, d_model=32, n_layers=3, n_heads=2,
                                      block_size=data.block_size, value_residual="svformer", x0_mode="qkv",
                                      x0_layers=(0,)))
        cfg = TrainConfig(steps=6, batch_size=8, eval_every=3, eval_batches=3, warmup=2)
    return train(model, data, cfg, progress=False).to_dict()
