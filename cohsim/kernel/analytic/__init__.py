"""Level 3 in closed form: a burst of identical containers launched at once, estimated in
milliseconds (`burstmodel`), from the planned calls read into arrays (`arrays`) off the same
cost definition the simulation uses (cohsim.kernel.callcost). docs/analytic.md has its
equations and its measured agreement with the simulation.
"""
