type file {};
(file f) generate (float p1) {
    app {
        echo "TOP" p1 stdout=@f;
    }
}
(file f2) process (file f1, string name, float p2) {
    app {
        sh "-c" "cat $0; echo $1 $2" @f1 name p2 stdout=@f2;
    }
}
(file f3) combine (file f1, file f2) {
    app {
        cat @f1 @f2 stdout=@f3;
    }
}
(file fd) diamond (float p1, float p2) {
    file fa;
    file fb;
    file fc;
    fa = generate(p1);
    fb = process(fa, "LEFT", p2);
    fc = process(fa, "RIGHT", p2);
    fd = combine(fb, fc);
}
file final <"198-diamond-compound.out">;
final = diamond(1.0, 100.0);
