"""Session 31: prices the choice of several builds on op-tuner logs (tune.json), every choice at its
own candidate column (op_choice_replay.py prices an unchanged choice at the row's `today` reading;
here both sides of a comparison are read the same way). Builds: /tmp/an/coda-bench-<name> (copies
of <build>/bench/coda-bench at each variant). Prints per file and overall: geomean of best / choice,
worst, rows within 0.92.
    python3 price_choices.py old,rule,table,new bench/results/session31/call4/r/tune_*/tune.json"""
import json,glob,math,sys,collections
sys.path.insert(0,'scripts')
from coda_choose import choose
from op_choice_replay import candidate_name, choose_query
g=lambda a: math.exp(sum(map(math.log,a))/len(a))
files=sys.argv[2:]
variants=sys.argv[1].split(',')
res=collections.defaultdict(dict)
for path in files:
    rows=[r for r in json.load(open(path))['rows'] if r.get('candidates')]
    for v in variants:
        ch=[candidate_name(c) for c in choose(f'/tmp/an/coda-bench-{v}','h100',[choose_query(r) for r in rows])]
        vals=[]
        for r,c in zip(rows,ch):
            t={x['kernel']:x['x_matmul'] for x in r['candidates']}
            if c in t: vals.append(min(t.values())/t[c])
        res[path.split('tune_')[-1].split('/')[0]][v]=vals
for k in sorted(res, key=lambda s:(int(s.split('_')[0]),s)):
    print(k.ljust(16),' '.join(f"{v}:{g(a):.3f}/{min(a):.2f}/{sum(x>=0.92 for x in a)}of{len(a)}" for v,a in res[k].items()))
tot={v:sum((res[k][v] for k in res),[]) for v in variants}
print('ALL'.ljust(16),' '.join(f"{v}:{g(a):.3f}/{min(a):.2f}/{sum(x>=0.92 for x in a)}of{len(a)}" for v,a in tot.items()))
