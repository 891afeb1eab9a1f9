type file;
file tmp[] <concurrent_mapper; prefix="tmp", suffix=".dat">;
