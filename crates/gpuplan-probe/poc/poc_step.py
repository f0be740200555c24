"""gpuplan probe --poc: a short training and decode benchmark of a model's shape in PyTorch.

A decoder-only transformer of the shape given (RMSNorm, rotary attention with grouped KV heads
through scaled_dot_product_attention, SwiGLU or plain MLP), randomly initialised on the GPU, no
download. Training runs the task's step: full training in mixed precision (fp32 weights, bf16
autocast, AdamW) or LoRA on frozen bf16 weights; several GPUs (under torchrun) run data
parallel (DDP). Decode generates tokens at batch 1 from a KV cache after a prefill.

Input: one JSON argument (the shape and settings `gpuplan probe --poc` derives from the
catalog). Output: one JSON line on standard output (rank 0).
"""

import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn


class RmsNorm(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x):
        scale = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)
        return (x.float() * scale).type_as(x) * self.weight


class LoraLinear(nn.Module):
    """A frozen linear layer with a trainable low-rank update (Hu et al. 2021)."""

    def __init__(self, base, rank):
        super().__init__()
        self.base = base
        self.base.weight.requires_grad_(False)
        self.down = nn.Linear(base.in_features, rank, bias=False)
        self.up = nn.Linear(rank, base.out_features, bias=False)
        nn.init.zeros_(self.up.weight)

    def forward(self, x):
        return self.base(x) + self.up(self.down(x))


def rotary(x, positions):
    half = x.shape[-1] // 2
    inverse = 1.0 / (10000 ** (torch.arange(half, device=x.device, dtype=torch.float32) / half))
    angles = positions[:, None].float() * inverse[None, :]
    cos, sin = angles.cos().type_as(x), angles.sin().type_as(x)
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


class Layer(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = s["heads"], s["kv_heads"], s["head_dim"]
        hidden = s["hidden"]
        self.attn_norm = RmsNorm(hidden)
        self.q_proj = nn.Linear(hidden, self.heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, self.kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, self.kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.heads * self.head_dim, hidden, bias=False)
        self.mlp_norm = RmsNorm(hidden)
        self.gated = s["gated_ffn"]
        if self.gated:
            self.gate_proj = nn.Linear(hidden, s["ffn"], bias=False)
        self.up_proj = nn.Linear(hidden, s["ffn"], bias=False)
        self.down_proj = nn.Linear(s["ffn"], hidden, bias=False)

    def attention(self, x, positions, cache):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = rotary(q, positions), rotary(k, positions)
        if cache is not None:
            if cache["k"] is not None:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        groups = self.heads // self.kv_heads
        if groups > 1:
            k = k.repeat_interleave(groups, dim=1)
            v = v.repeat_interleave(groups, dim=1)
        causal = cache is None or t > 1
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, -1))

    def mlp(self, x):
        if self.gated:
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
        return self.down_proj(F.gelu(self.up_proj(x)))

    def forward(self, x, positions, cache=None):
        x = x + self.attention(self.attn_norm(x), positions, cache)
        return x + self.mlp(self.mlp_norm(x))


class Decoder(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.embed = nn.Embedding(s["vocab"], s["hidden"])
        self.layers = nn.ModuleList(Layer(s) for _ in range(s["layers"]))
        self.norm = RmsNorm(s["hidden"])
        self.lm_head = nn.Linear(s["hidden"], s["vocab"], bias=False)
        self.checkpointing = s.get("checkpointing", False)

    def forward(self, tokens, positions, caches=None):
        x = self.embed(tokens)
        for i, layer in enumerate(self.layers):
            cache = caches[i] if caches is not None else None
            if self.checkpointing and self.training:
                x = torch.utils.checkpoint.checkpoint(layer, x, positions, use_reentrant=False)
            else:
                x = layer(x, positions, cache)
        return self.lm_head(self.norm(x))


def add_lora(model, targets, rank):
    for layer in model.layers:
        for name in targets:
            base = getattr(layer, name, None)
            if isinstance(base, nn.Linear):
                setattr(layer, name, LoraLinear(base, rank))


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def build(s, device, dtype):
    """The model made on the device in `dtype` (no host copy, no fp32 detour)."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            return Decoder(s)
    finally:
        torch.set_default_dtype(previous)


def train(s, device, world):
    dtype = torch.bfloat16 if s["precision"] == "bf16" else torch.float16
    if s["task"] == "lora":
        model = build(s, device, dtype)
        for p in model.parameters():
            p.requires_grad_(False)
        with torch.device(device):
            add_lora(model, s["lora_targets"], s["lora_rank"])
    else:
        model = build(s, device, torch.float32)
    trainable = [p for p in model.parameters() if p.requires_grad]
    for p in trainable:
        p.data = p.data.float()
    if world > 1:
        ids = [device.index] if device.type == "cuda" else None
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=ids)
    optimizer = torch.optim.AdamW(trainable, lr=1e-5)
    tokens = torch.randint(0, s["vocab"], (s["micro_batch"], s["seq"] + 1), device=device)
    positions = torch.arange(s["seq"], device=device)
    model.train()
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)

    def step():
        with torch.autocast(device.type, dtype=dtype):
            logits = model(tokens[:, :-1], positions)
            loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(s["warmup_steps"]):
        step()
    synchronize(device)
    started = time.perf_counter()
    for _ in range(s["steps"]):
        step()
    synchronize(device)
    seconds = (time.perf_counter() - started) / s["steps"]
    return {
        "step_seconds": seconds,
        "tokens_per_second": s["micro_batch"] * s["seq"] * world / seconds,
    }


@torch.no_grad()
def decode(s, device):
    dtype = torch.bfloat16 if s["precision"] == "bf16" else torch.float16
    model = build(s, device, dtype).eval()
    caches = [{"k": None, "v": None} for _ in range(s["layers"])]
    prompt = torch.randint(0, s["vocab"], (1, s["prompt_tokens"]), device=device)
    logits = model(prompt, torch.arange(s["prompt_tokens"], device=device), caches)
    token = logits[:, -1:].argmax(-1)
    for i in range(s["warmup_steps"]):
        position = torch.tensor([s["prompt_tokens"] + i], device=device)
        token = model(token, position, caches)[:, -1:].argmax(-1)
    synchronize(device)
    started = time.perf_counter()
    base = s["prompt_tokens"] + s["warmup_steps"]
    for i in range(s["decode_tokens"]):
        token = model(token, torch.tensor([base + i], device=device), caches)[:, -1:].argmax(-1)
    synchronize(device)
    return {"decode_seconds_per_token": (time.perf_counter() - started) / s["decode_tokens"]}


def peak_memory(device):
    return torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None


def main():
    s = json.loads(sys.argv[1])
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if s.get("device", "cuda") == "cuda":
        if not torch.cuda.is_available():
            print(json.dumps({"error": "PyTorch sees no CUDA GPU"}))
            return 2
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    if world > 1:
        torch.distributed.init_process_group("nccl" if device.type == "cuda" else "gloo")
    torch.manual_seed(0)
    result = {
        "gpus": world,
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "oom": False,
    }
    try:
        result.update(train(s, device, world))
        result["training_peak_memory_bytes"] = peak_memory(device)
    except torch.cuda.OutOfMemoryError:
        result["oom"] = True
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    if world == 1 and s["decode_tokens"] > 0:
        try:
            result.update(decode(s, device))
        except torch.cuda.OutOfMemoryError:
            result["decode_oom"] = True
    if world > 1:
        torch.distributed.destroy_process_group()
    if rank == 0:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
