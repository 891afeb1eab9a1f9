# date wrote a time of day; ls ran in the job directory, where its redirections were open
grep -Eq '[0-9][0-9]:[0-9][0-9]:[0-9][0-9]' sanity1.out && [ ! -s sanity1.err ] \
  && grep -qx sanity2.out sanity2.out && [ ! -s sanity2.err ]
