"""Twenty-seventh session: the FSDP2 norm-weight gather, A/B in one process (torchrun, 2 GPUs).
A = the norm weights gathered between layers (coda.nn.model.run_layers before 30b2b42, restated
here), B = all gathered before the first layer (this tree). The coda variant of coda-train under
FSDP2 with fp32 master shards (MixedPrecisionPolicy bf16/fp32), on the same batches; rounds of 10
training steps (forward, backward, clip, AdamW), A and B alternating and swapping order each
round; CUDA events per step. Usage: torchrun --nproc-per-node 2 s27_ab_gather.py [coda-train flags]"""
import statistics
import sys

import torch

import coda.hf
from coda import parallel, train
from coda.corpus import MarkovCorpus
from coda.nn import model as coda_model
from coda.nn.layer import first_state


def gather_between_layers(embed, layers, final_norm_weight, position_ids):  # A: the old order
    batch, seq, hidden = embed.shape
    positions, documents = coda_model.flat_positions(position_ids, batch, seq, embed.device)
    state = first_state(embed.reshape(batch * seq, hidden), coda_model.whole(layers[0].input_norm_weight))
    for i, layer in enumerate(layers):
        w_next = coda_model.whole(layers[i + 1].input_norm_weight) if i + 1 < len(layers) else final_norm_weight
        state = layer(state, positions, batch=batch, documents=documents, next_norm_weight=w_next)
    return state


def main():
    args = train.parse_args(sys.argv[1:] + ["--precision", "amp", "--parallel", "fsdp"])
    ranks, device = parallel.start("fsdp", torch.device("cuda"))
    config = train.build_config(args)
    corpus = MarkovCorpus(args.vocab, support=args.corpus_support, modes=args.corpus_modes, seed=args.seed,
                          device=device)
    batches = parallel.rows(corpus.sample(10 * args.batch, args.seq).view(10, args.batch, args.seq), ranks)
    model, forward = train.prepare_variant("coda", train.build_initial_model(config, args.seed), args.model,
                                           device, precision="amp", ranks=ranks)
    params, opt, _ = train.make_optimizer(model, args, device, sharded=True)
    sides = {"A": gather_between_layers, "B": coda_model.run_layers}
    times = {k: [] for k in sides}

    def block(name):
        coda.hf.run_layers = sides[name]
        marks = []
        for ids in batches:
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            forward(input_ids=ids, labels=ids).loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            stop.record()
            marks.append((start, stop))
        torch.cuda.synchronize()
        return [a.elapsed_time(b) for a, b in marks]

    block("A"), block("B")  # warm-up
    for r in range(8):
        for name in ("AB" if r % 2 == 0 else "BA"):
            times[name] += block(name)[1:]
    if ranks.leader:
        a, b = statistics.median(times["A"]), statistics.median(times["B"])
        print(f"hidden {args.hidden} layers {args.layers} batch {args.batch}: median ms/step "
              f"A (gathered between layers) {a:.2f}, B (gathered first) {b:.2f}; B/A {b / a:.3f}; "
              f"means {statistics.mean(times['A']):.2f} / {statistics.mean(times['B']):.2f}; n = {len(times['A'])}")
    parallel.stop(ranks)


if __name__ == "__main__":
    main()
