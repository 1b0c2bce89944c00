from paidtwice.cli import main

main()
