type file;
type pair { file links; file rechts; }
type thing { file eerste; pair derde; }
thing t <ext; exec="m.sh">;
trace(@t.eerste, @t.derde.links, @t.derde.rechts);
