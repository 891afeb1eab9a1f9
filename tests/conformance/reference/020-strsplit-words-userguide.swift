string t = "my name is John and i like puppies.";
string words[] = @strsplit(t, "\\s");
foreach word in words {
  trace(word);
}
