int x = 1;
{
    int y = x + 1;
    {
        int z = y + 1;
        trace(z);
    }
}
