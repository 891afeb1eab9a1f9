string a = "abc";
boolean lt = a < "abd";
boolean eq = a == "abc";
if (lt && eq) { trace("ok"); }
