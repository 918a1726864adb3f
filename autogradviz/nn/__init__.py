"""placeholder: replaced by the nn package"""
