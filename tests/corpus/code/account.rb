require "json"
require_relative "ledger"

# Banking helpers.
module Bank
  # An account with a balance — in €.
  class Account
    attr_reader :balance

    def initialize(balance = 0)
      @balance = balance
    end

    # Add money.
    def deposit(amount)
      @balance += amount
    end

    def self.open
      new(0)
    end
  end
end

def report(account)
  puts JSON.dump(balance: account.balance)
end
