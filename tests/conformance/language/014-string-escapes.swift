trace("tab\there", "quote\"q", "back\\slash");
