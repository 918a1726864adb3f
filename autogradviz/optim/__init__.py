"""placeholder: replaced by the optim package"""
