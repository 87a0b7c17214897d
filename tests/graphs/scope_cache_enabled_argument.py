# cache_enabled from an argument reaches jitamp::autocast_cache_enabled right
# after the scripted __init__, and the result is stored on that same object.
# RUN: jitamp dump %s:cached | filecheck %s --check-prefix ARG
# RUN: jitamp dump %s:default_cache | filecheck %s --check-prefix DEFAULT
import torch


def cached(x, y, c: bool):
    with torch.autocast("cpu", cache_enabled=c):
        z = torch.mm(x, y)
    return z


def default_cache(x, y):
    with torch.autocast("cpu"):
        z = torch.mm(x, y)
    return z

# ARG-LABEL: graph(%x.1 : Tensor,
# ARG: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# ARG: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# ARG-NEXT: prim::CallMethod[name="__init__"]([[AC]], {{.*}}, %c.1)
# ARG-NEXT: [[FLAG:%[^ ]+]] : bool = jitamp::autocast_cache_enabled(%c.1)
# ARG-NEXT: prim::SetAttr[name="_jitamp_cache_enabled"]([[AC]], [[FLAG]])
# ARG-NEXT: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter([[AC]])
# ARG-NEXT: jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# ARG-NEXT: jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# ARG-NEXT: aten::mm(
# ARG-NEXT: jitamp::autocast_exit([[G]])

# cache_enabled=None (the default) is resolved at run time, as eager's
# __init__ does.
# DEFAULT-LABEL: graph(%x.1 : Tensor,
# DEFAULT: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# DEFAULT: [[NONE:%[^ ]+]] : NoneType = prim::Constant()
# DEFAULT: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# DEFAULT-NEXT: prim::CallMethod[name="__init__"]([[AC]], {{.*}}, [[NONE]])
# DEFAULT-NEXT: [[FLAG:%[^ ]+]] : bool = jitamp::autocast_cache_enabled([[NONE]])
# DEFAULT-NEXT: prim::SetAttr[name="_jitamp_cache_enabled"]([[AC]], [[FLAG]])
# DEFAULT-NEXT: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter([[AC]])
# DEFAULT-NEXT: jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# DEFAULT-NEXT: jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# DEFAULT-NEXT: aten::mm(
# DEFAULT-NEXT: jitamp::autocast_exit([[G]])
# DEFAULT-NOT: jitamp::autocast_cache_enabled
