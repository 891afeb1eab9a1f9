(boolean r) t(string m) { trace(m); r = true; }
boolean b = t("left") || t("right");
trace(b);
