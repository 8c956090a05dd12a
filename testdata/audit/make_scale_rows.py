#!/usr/bin/python3
"""Rows for the audit scale figure: N rows, 3 measurements, 50 sources with yes-rates 0.2-0.8 (two measurements carry the label weakly).

    /usr/bin/python3 testdata/audit/make_scale_rows.py 1000000 > rows.csv
"""
import random, sys
n=int(sys.argv[1]); random.seed(1)
print("label,source,m1,m2,m3")
rates=[0.2+0.6*k/49 for k in range(50)]
out=[]
for i in range(n):
    k=i%50
    y=random.random()<rates[k]
    b=0.15 if y else 0.0
    out.append("%d,src%02d,%.6f,%.6f,%.6f"%(y,k,random.random()*0.8+b,random.random()*0.9+b*0.5,random.random()))
    if len(out)>=100000:
        sys.stdout.write("\n".join(out)+"\n"); out=[]
if out: sys.stdout.write("\n".join(out)+"\n")
