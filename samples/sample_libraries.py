"""Models of the libraries people script and export (torchvision, transformers, timm), built from
configs: random weights, no hub downloads. Each needs its package (Sample.needs); a torch beside
which it does not import skips the sample with the reason (unmade.json)."""

import torch
from torch import nn

from sample_table import Expect, Sample, copies


def resnet18() -> nn.Module:
    import torchvision  # only --large needs it; importing it is slow

    return torchvision.models.resnet18(weights=None)


def vit_b_16() -> nn.Module:
    import torchvision

    return torchvision.models.vit_b_16(weights=None)


# The transformers models, each wrapped to return its last hidden state, a plain tensor.

class LastHidden(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, *ids: torch.Tensor) -> torch.Tensor:
        names = ["input_ids", "decoder_input_ids"][:len(ids)]
        return self.model(**dict(zip(names, ids))).last_hidden_state


def bert_encoder() -> nn.Module:
    import transformers

    return LastHidden(transformers.BertModel(transformers.BertConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, vocab_size=1000)))


def llama_decoder() -> nn.Module:
    import transformers

    return LastHidden(transformers.LlamaModel(transformers.LlamaConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, vocab_size=1000, use_cache=False)))


def t5_encoder_decoder() -> nn.Module:
    import transformers

    return LastHidden(transformers.T5Model(transformers.T5Config(
        d_model=64, d_ff=128, d_kv=16, num_layers=2, num_heads=4, vocab_size=1000, use_cache=False)))


def convnext_atto() -> nn.Module:
    import timm

    return timm.create_model("convnext_atto", pretrained=False)


SAMPLES = [
    Sample("resnet18", resnet18, ["1x3x224x224"],
           copies(dtype_device=1, same_layout=1), large=True,
           why="NCHW convs (all on oneDNN) copy nothing; the avgpool mean divides by an int64 "
               "0-dim count (dtype_device) and fc's addmm copies its bias into the [1, 1000] "
               "output, same_layout because batch 1 leaves no broadcast dim.", needs="torchvision",
           pt2_inputs=["8x3x224x224:channels_last"],
           pt2=Expect(copies(implicit_layout=17, broadcast=1, dtype_device=1),
                      "Exported with a channels_last batch of 8 (the seed's case): each 3x3 and "
                      "7x7 convolution meets NCHW weights and copies its weight into channels_last "
                      "(17 implicit, 44 MB in all); the 3 downsample 1x1 weights [C, Cin, 1, 1] are "
                      "dense in both orders, no copy. avgpool's mean divides by an int64 0-dim count "
                      "(dtype_device); fc's addmm copies its bias into the [8, 1000] output "
                      "(broadcast).")),
    Sample("vit_b_16", vit_b_16, ["1x3x224x224"],
           copies(implicit_layout=12, broadcast=36, same_layout=1), large=True,
           why="Per encoder layer, the eval fast path aten::_native_multi_head_attention clones "
               "its head-merge input, a [1, 197, 12, 64] view with the heads transposed "
               "(implicit), and copies the out-projection bias into addmm's [197, 768] output "
               "(broadcast); the MLP's two Linears on the 3-D activations copy their biases into "
               "addmm's outputs (2 broadcast). The classifier's Linear at batch 1 copies its bias "
               "into [1, 1000] (same_layout). LibTorch 2.x runs the same fast path and copies the "
               "same (its archive, though, calls aten::scaled_dot_product_attention in the "
               "module's slow path, so 1.13 cannot load it).", needs="torchvision",
           pt2=Expect(copies(explicit_layout=12, broadcast=48, same_layout=1),
                      "torch.export traces nn.MultiheadAttention's general path, not the fast path: "
                      "per encoder layer the packed in-projection's q, k, v split is made contiguous "
                      "explicitly (explicit); scaled_dot_product_attention's CPU output keeps the "
                      "query's memory order, so the head merge is a view (no implicit copy); the "
                      "in-projection, out-projection and the MLP's two Linears each copy their bias "
                      "into addmm's output (4 broadcast). The classifier at batch 1 copies its bias "
                      "into [1, 1000] (same_layout).")),
    Sample("bert_encoder", bert_encoder, ["2x16:i64"], copies(broadcast=14), pt2_only=True, min_torch=2,
           needs="transformers",
           why="transformers' BertModel (2 layers, hidden 64): the token_type_ids buffer [1, 512] "
               "sliced and expanded over the batch (stride 0) is made dense for aten::embedding's "
               "lookup (broadcast); per layer the six Linears on the 3-D [2, 16, *] activations (query, "
               "key, value, attention output, intermediate, output) copy their biases into addmm's "
               "[32, *] outputs (12 broadcast); the pooler's Linear on [2, 64] copies its bias "
               "(broadcast). The heads' split and merge around scaled_dot_product_attention are views."),
    Sample("llama_decoder", llama_decoder, ["2x16:i64"], copies(broadcast=4, dtype_device=14), pt2_only=True,
           min_torch=2, needs="transformers",
           why="transformers' LlamaModel (2 layers, 4 query and 2 key/value heads): the causal "
               "mask's cumsum over the bool mask casts it to int64, and the rotary embedding casts "
               "the int64 positions [1, 16, 1] to float (aten::to) (2 dtype_device); cos and sin are "
               "scaled by a Python float (a float64 wrapped number cast to float, 2); each of the 5 "
               "RMSNorms (two per layer and the last) divides its mean by an int64 count and adds a "
               "Python float eps (2 each, 10). Grouped-query attention's repeat_kv expands the 2 key "
               "and value heads to 4 along a zero-stride dim and reshapes them: a copy each "
               "(broadcast, 2 per layer). The Linears have no bias: no bias copies."),
    Sample("t5_encoder_decoder", t5_encoder_decoder, ["2x16:i64", "2x8:i64"],
           copies(explicit_layout=4, dtype_device=35), pt2_only=True, min_torch=2, needs="transformers",
           why="transformers' T5Model (2 encoder and 2 decoder layers): the relative position bias "
               "comes from an embedding [L, L, H] permuted to [1, H, L, L] (heads innermost in "
               "memory); transformers' SDPA integration adds the mask and calls .contiguous() on it "
               "in each self-attention (explicit: 2 of [2, 4, 16, 16], 2 of [2, 4, 8, 8]). Every "
               "T5LayerNorm (12: two per encoder layer, three per decoder layer, one after each "
               "stack) divides its mean by an int64 count and adds a Python float eps (24 "
               "dtype_device); the position buckets cast between bool, int64 and float and divide "
               "and multiply by Python numbers: 6 casts in the encoder's bidirectional buckets, 5 in "
               "the decoder's (11 dtype_device)."),
    Sample("convnext_atto", convnext_atto, ["2x3x64x64:channels_last"],
           copies(implicit_layout=4, broadcast=25, dtype_device=1), pt2_only=True, min_torch=2, needs="timm",
           why="timm's convnext_atto fed channels_last with NCHW weights, at one intra-op thread: the "
               "4x4 stem and the three 2x2 downsampling convolutions copy their weights into "
               "channels_last (4 implicit); the 7x7 depthwise weights [C, 1, 7, 7] and the 1x1 "
               "weights are dense in both orders (no copy). Each of the 12 blocks' two 1x1 "
               "convolutions runs slow_conv2d at one thread, which writes its bias into the "
               "channels_last output by a broadcast copy (24); the head's Linear on [2, 320] copies "
               "its bias into [2, 1000] (broadcast); adaptive_avg_pool2d's mean divides by an int64 "
               "count (dtype_device)."),
]
