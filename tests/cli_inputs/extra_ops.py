"""An op library registered from Python on import, as torchvision registers
torchvision::nms: a saved model calling it loads only after `--import`."""
import torch

lib = torch.library.Library("jitamp_test_extra", "DEF")
lib.define("twice(Tensor x) -> Tensor")
lib.impl("twice", lambda x: x * 2, "CompositeExplicitAutograd")
