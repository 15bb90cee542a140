from shootout.cli.main import main

main()
