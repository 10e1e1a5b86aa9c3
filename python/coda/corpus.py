"""A synthetic token corpus with a known entropy floor, for `coda-train`.

Why synthetic: a training-parity check needs (a) no downloads, (b) the same batches for every
variant, and (c) a number the loss is heading to, so that "how far from converged" is measurable
and not a guess. A sparse random Markov chain over the vocabulary gives all three: its per-token
conditional entropy is computed exactly (float64, from the stationary distribution), and a small
Llama gets well below log(V) within a few hundred steps.

The chain is of order two, but cheap to store: the successors of a token `b` are a fixed random
set of `support` tokens, and their probabilities depend on `b` and on the *mode* of the token
before it (`a mod modes`). A model that looks at the previous token only can reach the bigram
entropy at best (`bigram_entropy()`); going below it needs attention to the token two back, so
a broken attention / RoPE path shows up in the curve, not just in the embeddings.

All random numbers come from seeded CPU `torch.Generator`s, so the corpus is the same on every
device; the stationary distribution and the sampling run on the training device, vectorised over
sequences (one small step per position): well under a second on a GPU for 1600 sequences of
2048 tokens, a few seconds on a CPU.
"""
from __future__ import annotations

import math

import torch


class MarkovCorpus:
    """Order-2 sparse Markov chain: p(x_t | x_{t-2}, x_{t-1}) = probs[x_{t-2} % modes, x_{t-1}, k]
    on x_t = successors[x_{t-1}, k]. The chain's state is (mode of x_{t-2}, x_{t-1})."""

    def __init__(self, vocab: int, support: int = 8, modes: int = 4, sharpness: float = 2.0,
                 seed: int = 0, device: str | torch.device = "cpu"):
        if vocab < support + 1 or support < 1 or modes < 1:
            raise ValueError(f"need vocab > support >= 1 and modes >= 1 "
                             f"(vocab {vocab}, support {support}, modes {modes})")
        self.vocab, self.support, self.modes, self.sharpness = vocab, support, modes, sharpness
        self._seed = seed
        g = torch.Generator().manual_seed(seed)

        # Successors of b are b + offset (mod V) for `support` distinct offsets in [1, V-1].
        # Offset 1 is always there, so every token reaches every other one: the chain is
        # irreducible and has a single stationary distribution. The other offsets are distinct
        # by the sorted-sample trick (sorted draws from [0, n-k] plus 0..k-1 are distinct).
        others = support - 1
        draws = torch.randint(0, vocab - 2 - others + 1, (vocab, others), generator=g)
        offsets = torch.cat([torch.ones(vocab, 1, dtype=torch.long),
                             2 + draws.sort(dim=1).values + torch.arange(others)], dim=1)
        successors = (torch.arange(vocab)[:, None] + offsets) % vocab           # (V, K)

        # Probabilities: softmax of Gaussian logits ("Dirichlet-ish"); `sharpness` scales the
        # logits, higher = peakier = lower entropy. One distribution per (mode, token).
        logits = sharpness * torch.randn(modes, vocab, support, generator=g, dtype=torch.float64)
        probs = logits.softmax(dim=-1)                                           # (M, V, K)

        # Drawn on the CPU (same chain everywhere); the power iteration and the sampling loop
        # then run where the training runs, where a GPU makes them take milliseconds.
        self.device = torch.device(device)
        self.successors, self.probs = successors.to(self.device), probs.to(self.device)
        self._cdf = self.probs.cumsum(dim=-1)
        self._cdf[..., -1] = 1.0  # guard the last bin against rounding
        self.stationary = self._stationary()                                     # (M, V)

    def _stationary(self, tol: float = 1e-14, max_iter: int = 100_000) -> torch.Tensor:
        """Stationary distribution over states (mode, token) by power iteration in float64.
        The lazy chain (pi + pi P) / 2 has the same fixed point and cannot oscillate."""
        V, M = self.vocab, self.modes
        # State (m, b) moves to (b % M, successors[b, k]) with probability probs[m, b, k].
        target = ((torch.arange(V, device=self.device) % M)[:, None] * V + self.successors).flatten()
        pi = torch.full((M * V,), 1.0 / (M * V), dtype=torch.float64, device=self.device)
        for _ in range(max_iter):
            flow = (pi.view(M, V, 1) * self.probs).sum(dim=0).flatten()  # mass leaving b by edge k
            moved = torch.zeros_like(pi).index_add_(0, target, flow)
            nxt = 0.5 * (pi + moved)
            if (nxt - pi).abs().sum().item() < tol:
                return nxt.view(M, V)
            pi = nxt
        raise RuntimeError("stationary distribution did not converge")

    @staticmethod
    def _entropy(p: torch.Tensor) -> torch.Tensor:
        return -(p * p.clamp_min(1e-300).log()).sum(dim=-1)

    def entropy_floor(self) -> float:
        """Entropy rate H(x_t | all previous tokens) in nats/token: the lowest expected loss any
        model can reach. (A sequence's first prediction lacks x_{t-2}, so its floor is the
        bigram entropy; over 2047 predictions that moves the mean by < 1e-3 nats.)"""
        return float((self.stationary * self._entropy(self.probs)).sum())

    def bigram_entropy(self) -> float:
        """H(x_t | x_{t-1}) in nats/token: the floor of a model that sees only the previous token."""
        token_mass = self.stationary.sum(dim=0)                                  # (V,)
        mixed = (self.stationary[..., None] * self.probs).sum(dim=0)
        mixed = mixed / token_mass.clamp_min(1e-300)[:, None]
        return float((token_mass * self._entropy(mixed)).sum())

    def sample(self, num_sequences: int, seq_len: int, seed: int | None = None) -> torch.Tensor:
        """(num_sequences, seq_len) int64 token ids, each sequence started from the stationary
        distribution (so every position has the same marginal and the loss floor is flat).
        The random numbers come from a CPU generator: the same tokens on every device."""
        g = torch.Generator().manual_seed(self._seed + 1 if seed is None else seed)
        state = torch.multinomial(self.stationary.flatten().cpu(), num_sequences,
                                  replacement=True, generator=g).to(self.device)
        mode, token = state // self.vocab, state % self.vocab
        out = torch.empty(seq_len, num_sequences, dtype=torch.long, device=self.device)
        out[0] = token  # time-major above: each step writes one contiguous row
        uniforms = torch.rand(seq_len, num_sequences, 1, generator=g, dtype=torch.float64)
        uniforms = uniforms.to(self.device)
        for t in range(1, seq_len):
            # Inverse-CDF draw of the successor index: count the CDF bins below the uniform.
            k = (uniforms[t] >= self._cdf[mode, token]).sum(dim=1).clamp_max_(self.support - 1)
            mode, token = token % self.modes, self.successors[token, k]
            out[t] = token
        return out.t().contiguous()

    def log_probs(self, tokens: torch.Tensor) -> torch.Tensor:
        """log p(x_t | x_{t-2}, x_{t-1}) under the true chain for t >= 2: (N, T-2) float64.
        -inf where a token is not a successor (i.e. the sequence is not from this chain)."""
        tokens = tokens.to(self.device)
        prev2, prev, nxt = tokens[:, :-2], tokens[:, 1:-1], tokens[:, 2:]
        hit = self.successors[prev] == nxt[..., None]                            # (N, T-2, K)
        p = (self.probs[prev2 % self.modes, prev] * hit).sum(dim=-1)
        return p.log()

    def describe(self) -> dict:
        return {"kind": "order-2 sparse Markov chain", "vocab": self.vocab,
                "support": self.support, "modes": self.modes, "sharpness": self.sharpness,
                "seed": self._seed,
                "entropy_floor": self.entropy_floor(), "bigram_entropy": self.bigram_entropy(),
                "uniform_entropy": math.log(self.vocab)}
