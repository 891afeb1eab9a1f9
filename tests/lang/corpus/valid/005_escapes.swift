string s = "tab\there\nnewline \"quoted\" back\\slash \r \b \f";
trace(s);
