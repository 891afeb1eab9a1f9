for f in 032-mapper.a0.out 032-mapper.a1.out; do grep -q "Hello, world" $f || exit 1; done
for f in 032-mapper.b0.out 032-mapper.b1.out; do grep -q "Hello again" $f || exit 1; done
