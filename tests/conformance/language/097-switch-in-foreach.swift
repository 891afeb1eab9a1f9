foreach i in [0:3] { switch (i) { case 0: trace("zero"); case 2: trace("two"); default: trace("other", i); } }
