#!/usr/bin/python3
"""workloads/torch_step.py: a real data-parallel training step, beside ccprobe's proxy.

A small GPT-style stack (token embedding, N pre-norm transformer blocks of causal
self-attention and a 4x MLP, a head over a small vocabulary) trained with
torch.nn.parallel.DistributedDataParallel, bucket_cap_mb = the workload's bucket, on
synthetic tokens, a fixed number of steps after warm-up. bf16 on GPUs (NCCL), fp32 on
host memory (gloo). One process per rank, started by the launcher: ranks come from Open
MPI's OMPI_COMM_WORLD_* or Slurm's SLURM_* variables (or torchrun's RANK/WORLD_SIZE); the
rendezvous is on the first host (--master, else MASTER_ADDR, else 127.0.0.1).

Every step runs three ways, interleaved, each timed from a barrier to the slowest
rank's end: the DDP step, the same forward and backward under no_sync() (compute alone:
no reduction, no optimizer step) and all-reduces of the gradient's buckets alone (comm
alone). Rank 0 writes JSON Lines in ccprobe's schema (docs/results.md): a "run" header
(torch, CUDA, NCCL versions, backend, the interpreter), a readiness record (every rank
joined within --deadline), one record per step, a summary, an "end" record.

Every rank is fed the same tokens, so after each synchronised step every rank's loss
must be the same: finite and identical across the data-parallel ranks is the check.

Exit codes: 0 ran (the records judge it), 1 the check failed (a loss not finite or
ranks disagreeing), 2 usage, 3 could not run (no torch, the backend did not join).
CCPROBE_FAULT=seed:RANK feeds rank RANK other tokens, so the losses differ (tests).
--seconds S keeps stepping for S seconds of timed steps (a soak: goodput, stalls).
Launch (docs/estimate.md, "Measured against a real step"):
  mpirun -np 4 -H a,b,c,d /usr/bin/python3 workloads/torch_step.py --master a \\
      --params 1e6 --layers 4 --tokens 512 --bucket 262144 -o torch.jsonl
"""
import argparse
import datetime
import json
import math
import os
import re
import socket
import subprocess
import sys
import time

SCHEMA = 1


def env_rank():
    """(rank, size, local_rank) from the launcher's environment."""
    for r, s, l in (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
                    ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
                    ("RANK", "WORLD_SIZE", "LOCAL_RANK"),
                    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID")):
        if r in os.environ and s in os.environ:
            return int(os.environ[r]), int(os.environ[s]), int(os.environ.get(l, "0"))
    return 0, 1, 0


def nccl_version(torch):
    """NCCL's version as "2.27.3": a tuple in recent torch, an int (22703) before."""
    try:
        v = torch.cuda.nccl.version()
    except Exception:  # noqa: BLE001 (a build without NCCL)
        return None
    if isinstance(v, int):
        return "%d.%d.%d" % (v // 10000, v // 100 % 100, v % 100) if v >= 10000 else \
            "%d.%d.%d" % (v // 1000, v // 100 % 10, v % 100)
    return ".".join(map(str, v))


def parse_size(text):
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper().rstrip("B")
    u = t[-1:] if t[-1:] in units and t[-1:] else ""
    v = float(t[:-1] if u else t)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(text)
    return int(v * units[u])


def gloo_ifname(master, port):
    """The interface this host reaches the master on (gloo binds to one by name)."""
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect((master, port))
        ip = s.getsockname()[0]
        s.close()
        out = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True,
                             timeout=10).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) >= 4 and f[3].split("/")[0] == ip:
                return f[1]
    except (OSError, subprocess.SubprocessError):
        pass
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--params", type=float, default=1e6, help="the workload's parameters [1e6]")
    ap.add_argument("--layers", type=int, default=4, help="transformer blocks [4]")
    ap.add_argument("--hidden", type=int, default=0, help="hidden size; 0: sqrt(params / (12 layers)) [0]")
    ap.add_argument("--tokens", type=int, default=512, help="tokens per rank per step [512]")
    ap.add_argument("--seq", type=int, default=64, help="sequence length [64]")
    ap.add_argument("--bucket", default="25M", help="DDP bucket_cap_mb as bytes (K/M/G) [25M]")
    ap.add_argument("--steps", type=int, default=8, help="timed steps [8]")
    ap.add_argument("--warmup", type=int, default=2, help="untimed steps first [2]")
    ap.add_argument("--seconds", type=float, default=0,
                    help="keep stepping until this many seconds of timed steps (a soak; at least --steps) [0]")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads per rank [1]")
    ap.add_argument("--max-params", type=float, default=2.5e8,
                    help="a larger model is scaled down to this (the scale is recorded) [2.5e8]")
    ap.add_argument("--backend", default="", help="gloo or nccl; default nccl with CUDA, else gloo")
    ap.add_argument("--master", default="", help="the first host's address (the rendezvous)")
    ap.add_argument("--port", type=int, default=29533, help="rendezvous port [29533]")
    ap.add_argument("--deadline", type=float, default=60, help="seconds for every rank to join [60]")
    ap.add_argument("-o", "--output", default="torch_step.jsonl", help="JSON Lines file (rank 0)")
    ap.add_argument("--nonce", default="", help="written into the header as given (ccdiag --nonce)")
    a = ap.parse_args()
    try:
        bucket = parse_size(a.bucket)
    except ValueError:
        ap.error("--bucket %r: expected a size such as 262144, 256K or 25M" % a.bucket)
    for name in ("layers", "tokens", "seq", "steps", "threads"):
        if getattr(a, name) < 1:
            ap.error("--%s %d: expected 1 or more" % (name, getattr(a, name)))
    if a.warmup < 0 or a.hidden < 0 or not (a.params >= 1) or not (a.deadline > 0) or \
            not (0 <= a.seconds <= 86400):
        ap.error("--warmup and --hidden are 0 or more, --params 1 or more, --deadline above 0, "
                 "--seconds 0 to 86400")
    if a.nonce and not re.fullmatch(r"[A-Za-z0-9._:+/=-]{1,128}", a.nonce):
        ap.error("invalid value %r for --nonce (1 to 128 letters, digits, '.', '_', ':', '+', '/', '=', '-')"
                 % a.nonce)

    rank, size, local_rank = env_rank()
    t_start = time.time()
    out = open(a.output, "w") if rank == 0 else None

    def write(rtype, rec):
        if out:
            rec = dict({"type": rtype}, **rec)
            if rtype == "run" and a.nonce:
                rec["nonce"] = a.nonce
            rec["elapsed_s"] = time.time() - t_start
            out.write(json.dumps(rec, allow_nan=False, default=str) + "\n")
            out.flush()

    try:
        import torch
        import torch.distributed as dist
        import torch.nn as nn
        import torch.nn.functional as F
    except ImportError as e:
        if out:
            write("run", {"schema": SCHEMA, "tool": "torch_step.py", "python": sys.executable,
                          "world_size": size})
            write("skip", {"kind": "probe", "name": "torch_step",
                           "reason": "%s cannot import torch: %s (Debian: apt-get install python3-torch)"
                           % (sys.executable, e)})
            write("end", {"status": "complete", "failures": 0, "exit_code": 0})
        print("torch_step.py: %s cannot import torch: %s" % (sys.executable, e), file=sys.stderr)
        return 3

    cuda = torch.cuda.is_available()
    backend = a.backend or ("nccl" if cuda else "gloo")
    master = a.master or os.environ.get("MASTER_ADDR", "127.0.0.1")
    if backend == "gloo" and "GLOO_SOCKET_IFNAME" not in os.environ and size > 1:
        ifn = gloo_ifname(master, a.port)
        if ifn:
            os.environ["GLOO_SOCKET_IFNAME"] = ifn
    torch.set_num_threads(a.threads)
    if cuda:
        torch.cuda.set_device(local_rank % torch.cuda.device_count())
    dev = torch.device("cuda") if cuda else torch.device("cpu")
    dtype = torch.bfloat16 if cuda else torch.float32

    # the shape: hidden from params, scaled down to --max-params
    layers = a.layers
    hidden = a.hidden or max(8, int(round(math.sqrt(a.params / (12.0 * layers)))))
    asked = 12.0 * hidden * hidden * layers if a.hidden else a.params
    while hidden > 8 and 12.0 * hidden * hidden * layers > a.max_params:
        hidden = int(hidden * 0.9)
    if cuda and not a.hidden and hidden >= 128:
        # tensor-core shapes and heads of 64: hidden a multiple of 64 on GPUs (the scale says so)
        hidden = 64 * max(1, int(round(hidden / 64.0)))
        while hidden > 64 and 12.0 * hidden * hidden * layers > a.max_params:
            hidden -= 64
    heads = max(1, hidden // 64) if hidden % 64 == 0 else 1
    vocab, seq = 256, min(a.seq, a.tokens)
    batch = max(1, a.tokens // seq)

    versions = {"torch": torch.__version__, "cuda": torch.version.cuda,
                "nccl": nccl_version(torch) if cuda else None}
    hostname = socket.gethostname()
    t0 = time.time()
    joined, why = True, None
    try:
        dist.init_process_group(backend, init_method="tcp://%s:%d" % (master, a.port), rank=rank,
                                world_size=size, timeout=datetime.timedelta(seconds=a.deadline))
        # every rank joined when one small all_reduce over all of them completes
        probe = torch.ones(1, device=dev)
        dist.all_reduce(probe)
        joined = int(probe.item()) == size
        if not joined:
            why = "the join all_reduce summed %d of %d ranks" % (int(probe.item()), size)
    except Exception as e:  # noqa: BLE001 (any failure to join is the finding)
        joined, why = False, "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
    init_s = time.time() - t0
    hosts = [hostname]
    if joined:
        names = [None] * size
        try:
            dist.all_gather_object(names, hostname)
            hosts = names
        except Exception:  # noqa: BLE001
            pass
    host_list = []
    for r, h in enumerate(hosts):
        for e in host_list:
            if e["name"] == h:
                e["ranks"].append(r)
                break
        else:
            host_list.append({"name": h, "ranks": [r]})
    write("run", {"schema": SCHEMA, "tool": "torch_step.py", "run_id": "%016x" % (int(t_start * 1e6) & (2**64 - 1)),
                  "start_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t_start)),
                  "argv": sys.argv, "world_size": size, "nodes": len(host_list), "hosts": host_list,
                  "python": sys.executable, "versions": versions, "backend": backend,
                  "options": {"backend": backend, "bucket_bytes": bucket, "steps": a.steps,
                              "warmup": a.warmup, "threads": a.threads}})
    base = {"kind": "probe", "name": "torch_step", "backend": backend,
            "dtype": "bf16" if cuda else "float", "ranks": size, "nodes": len(host_list),
            "hidden": hidden, "layers": layers, "tokens_per_rank": batch * seq, "seq": seq,
            "bucket_bytes": bucket, "framework": "torch " + torch.__version__, "python": sys.executable}
    write("measurement", dict(base, test="init", joined=joined, init_s=init_s, deadline_s=a.deadline,
                              master="%s:%d" % (master, a.port), reason=why))
    if not joined:
        print("torch_step.py: rank %d on %s: the %s backend did not join %d ranks within %g s: %s"
              % (rank, hostname, backend, size, a.deadline, why), file=sys.stderr)
        write("error", {"kind": "probe", "name": "torch_step", "test": "init",
                        "message": "the %s backend did not join: %s" % (backend, why)})
        write("end", {"status": "complete", "failures": 1, "exit_code": 3})
        if out:
            out.close()
        sys.stderr.flush()
        os._exit(3)  # a half-joined process group can hang a normal exit

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
            self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
            self.proj = nn.Linear(hidden, hidden, bias=False)
            self.fc1 = nn.Linear(hidden, 4 * hidden, bias=False)
            self.fc2 = nn.Linear(4 * hidden, hidden, bias=False)

        def forward(self, x):
            b, s, h = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, heads, h // heads).permute(2, 0, 3, 1, 4)
            att = (q @ k.transpose(-1, -2)) / math.sqrt(h // heads)
            mask = torch.ones(s, s, device=x.device, dtype=torch.bool).triu(1)
            att = att.masked_fill(mask, float("-inf")).softmax(-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(b, s, h))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, hidden)
            self.pos = nn.Parameter(torch.zeros(seq, hidden))
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln = nn.LayerNorm(hidden)
            self.head = nn.Linear(hidden, vocab, bias=False)

        def forward(self, idx):
            x = self.emb(idx) + self.pos
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    torch.manual_seed(1)
    model = GPT().to(dev, dtype)
    params = sum(p.numel() for p in model.parameters())
    ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=bucket / 2**20)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-4)
    # the same tokens on every rank: losses must agree (CCPROBE_FAULT=seed:RANK: that rank's differ, a test)
    fault = os.environ.get("CCPROBE_FAULT", "")
    gen = torch.Generator().manual_seed(8 if fault == "seed:%d" % rank else 7)
    tokens = torch.randint(0, vocab, (batch, seq + 1), generator=gen).to(dev)
    x, y = tokens[:, :-1], tokens[:, 1:]
    grad_el = sum(p.numel() for p in model.parameters() if p.requires_grad)
    el_size = 2 if cuda else 4
    per = max(1, bucket // el_size)
    comm_bufs = [torch.zeros(min(per, grad_el - o), device=dev, dtype=dtype) for o in range(0, grad_el, per)]

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def run(mode):
        dist.barrier()
        sync()
        t = time.perf_counter()
        loss = None
        if mode == "comm":
            for b in comm_bufs:
                dist.all_reduce(b)
        elif mode == "compute":
            with ddp.no_sync():
                loss = F.cross_entropy(ddp(x).reshape(-1, vocab).float(), y.reshape(-1))
                loss.backward()
            opt.zero_grad(set_to_none=True)
        else:
            loss = F.cross_entropy(ddp(x).reshape(-1, vocab).float(), y.reshape(-1))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        sync()
        mine = time.perf_counter() - t
        all_t = [torch.zeros(2, dtype=torch.float64) for _ in range(size)]
        v = torch.tensor([mine, loss.item() if loss is not None else 0.0], dtype=torch.float64)
        if backend == "nccl":
            all_t = [z.to(dev) for z in all_t]
            v = v.to(dev)
        dist.all_gather(all_t, v)
        return [float(z[0]) for z in all_t], [float(z[1]) for z in all_t]

    series = {"step": [], "compute": [], "comm": []}
    failures, check_msg, all_finite = 0, None, True
    flops = 6.0 * params * batch * seq
    max_steps = 100000
    t_timed, i = None, 0
    while True:
        # every rank steps as long as rank 0 says so (--seconds: a soak measured in steps)
        more = i < a.warmup + a.steps or (a.seconds > 0 and t_timed is not None and
                                          time.time() - t_timed < a.seconds and i - a.warmup < max_steps)
        flag = torch.tensor([1 if more else 0], device=dev if backend == "nccl" else "cpu")
        dist.broadcast(flag, 0)
        if not int(flag.item()):
            break
        if i == a.warmup:
            t_timed = time.time()
        got = {}
        for mode in ("step", "compute", "comm"):
            got[mode] = run(mode)
        i += 1
        if i <= a.warmup:
            continue
        k = i - 1 - a.warmup
        rank_t, losses = got["step"]
        st, co, cm = max(rank_t), max(got["compute"][0]), max(got["comm"][0])
        for m, val in (("step", st), ("compute", co), ("comm", cm)):
            series[m].append(val)
        finite = all(math.isfinite(v) for v in losses)
        all_finite = all_finite and finite
        spread = max(losses) - min(losses)
        same = finite and spread <= 1e-5 * max(1.0, abs(losses[0]))
        if not same and failures == 0:
            failures = 1
            check_msg = ("step %d: losses %s across the data-parallel ranks (%s)"
                         % (k, "not finite" if not finite else "differ by %.3g" % spread, losses))
        ex = max(0.0, st - co)
        write("measurement", dict(base, test="step", step=k, step_s=st, compute_s=co, comm_alone_s=cm,
                                  exposed_s=ex, overlap=max(0.0, 1 - ex / cm) if cm > 0 else None,
                                  flops_per_rank=flops / st, rank_step_s=rank_t,
                                  last_ready_rank=max(range(size), key=lambda r: got["compute"][0][r]),
                                  loss=losses[0] if finite else None, losses_agree=same,
                                  params=float(params), params_asked=asked, scale=params / asked))

    def med(v):
        s = sorted(v)
        n = len(s)
        return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])

    def stats(v):
        mean = sum(v) / len(v)
        sd = math.sqrt(sum((z - mean) ** 2 for z in v) / (len(v) - 1)) if len(v) > 1 else 0.0
        return {"n": len(v), "min": min(v), "median": med(v), "mean": mean, "max": max(v),
                "cv": sd / mean if mean > 0 else 0.0}

    ex = [max(0.0, s - c) for s, c in zip(series["step"], series["compute"])]
    ov = [max(0.0, 1 - e / c) if c > 0 else 0.0 for e, c in zip(ex, series["comm"])]
    write("measurement", dict(base, test="summary", steps=len(series["step"]), warmup=a.warmup,
                              step_s=med(series["step"]), compute_s=med(series["compute"]),
                              comm_alone_s=med(series["comm"]), exposed_s=med(ex), overlap=med(ov),
                              flops_per_rank=flops / med(series["step"]),
                              compute_flops_per_rank=flops / med(series["compute"]),
                              step_stats_s=stats(series["step"]), compute_stats_s=stats(series["compute"]),
                              comm_stats_s=stats(series["comm"]), step_series_s=series["step"],
                              params=float(params), params_asked=asked, scale=params / asked,
                              buckets=len(comm_bufs), grad_bytes=grad_el * el_size,
                              losses_agree=failures == 0, losses_finite=all_finite,
                              comm="DDP's reducer: %s all_reduce of each bucket as autograd writes it" % backend))
    if failures:
        write("error", {"kind": "probe", "name": "torch_step", "test": "step", "message": check_msg})
        print("torch_step.py: " + check_msg, file=sys.stderr)
    write("end", {"status": "complete", "failures": failures, "exit_code": 1 if failures else 0})
    # every rank here, then out at once: tearing gloo's process group down has hung at exit on
    # a loaded machine (the records are written; nothing is left to wait for)
    try:
        dist.barrier()
    except Exception:  # noqa: BLE001
        pass
    if out:
        out.close()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1 if failures else 0)


if __name__ == "__main__":
    sys.exit(main())
