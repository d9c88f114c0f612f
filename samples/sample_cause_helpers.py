"""A helper in a file of its own, as model code keeps its reshaping utilities: it returns a view
whose strides happen to be channels_last (the causes samples: the birthplace is this file's line,
not the model's)."""
import torch


def tokens_to_image(h: torch.Tensor, hgt: int, w: int) -> torch.Tensor:
    """[B, H*W, C] tokens back to a [B, C, H, W] image: a view, laid out channels_last."""
    return h.transpose(1, 2).reshape(h.size(0), h.size(2), hgt, w)
