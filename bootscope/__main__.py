from bootscope.cli import main

main()
