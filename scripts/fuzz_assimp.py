#!/usr/bin/env python3
"""Mutation fuzzing of the isolated Assimp import (scripts/fuzz.sh assimp).

Usage: fuzz_assimp.py SECONDS SEED SKINSOLVE OUTDIR
Mutates the assimp test models (.x/.dae/.fbx under 60 KB), runs
`skinsolve info` on each mutant (the import runs in the limited child) and
keeps every input whose import failed with "Assimp failed (...)" (a crash,
abort, memory or time limit caught by the isolation) or whose command did
not exit 0/1 (a defect of ours) in OUTDIR, named by the message. Prints
execs and counts per message.
"""
import os, random, subprocess, sys, time, glob, hashlib
random.seed(int(sys.argv[2]))
dur=float(sys.argv[1])
CLI=sys.argv[3]
OUT=sys.argv[4]
os.makedirs(OUT, exist_ok=True)
MODELS=os.environ.get('SKS_ASSIMP_MODELS','/usr/share/assimp/models')
seeds=[]
for pat in ['X/*.x','X/*.X','Collada/*.dae','FBX/*.fbx']:
    for f in glob.glob(MODELS+'/'+pat):
        if os.path.getsize(f) < 60000: seeds.append(f)
data={f:open(f,'rb').read() for f in seeds}
end=time.time()+dur; n=0; found={}
if not seeds: print('no assimp test models under', MODELS); sys.exit(0)
while time.time()<end:
    f=random.choice(seeds); d=bytearray(data[f]); ext=os.path.splitext(f)[1].lower()
    for _ in range(random.randint(1,8)):
        op=random.random(); i=random.randrange(len(d))
        if op<0.4: d[i]=random.randrange(256)
        elif op<0.6: d[i:i+random.randint(1,64)]=b''
        elif op<0.8: j=random.randrange(len(d)); d[i:i]=d[j:j+random.randint(1,64)]
        else: d[i:i]=random.choice([b'0',b'-1',b'99999999',b'4294967295',b'\0',b'{',b'}',b'<',b'>'])
    p=os.path.join(OUT,'cur'+ext); open(p,'wb').write(d)
    t0=time.time()
    try:
        r=subprocess.run([CLI,'info',p,'--max-memory','512M','--timeout','10'],capture_output=True,timeout=60)
        msg=r.stderr.decode(errors='replace'); rc=r.returncode
    except subprocess.TimeoutExpired:
        msg='HANG'; rc=-999
    n+=1
    key=None
    if 'Assimp failed' in msg: key=msg.split('Assimp failed')[1].strip()[:40]
    elif rc not in (0,1): key='rc%d'%rc
    if key:
        h=hashlib.md5(d).hexdigest()[:8]
        out=os.path.join(OUT,'crash_%s_%s%s'%(key.replace(' ','_').replace('/','_').replace('(','').replace(')','')[:30],h,ext))
        open(out,'wb').write(d); found[key]=found.get(key,0)+1
print('execs',n,'found',found)
