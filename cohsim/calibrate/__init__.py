"""Calibration: reading benchmark data (`benchdata`), fitting the free parameters with
uncertainty (`calibration`), and checking predictions against held-out runs (`heldout`).
"""
