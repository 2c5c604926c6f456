from pagebench.cli import main

main()
