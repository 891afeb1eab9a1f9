grep -q ' INFO  Loader VERSION Swift 0\.96\.2 ' run001/*.log
