<?php

namespace App\Shop;

use App\Models\Product;
use Illuminate\Support\Collection;

/**
 * A shopping cart.
 */
#[Entity]
class Cart
{
    private array $items = [];

    /** Add a product. */
    public function add(Product $product): void
    {
        $this->items[] = $product;
    }

    public function total(): float
    {
        return array_sum(array_map(fn ($p) => $p->price, $this->items));
    }
}

interface Checkout
{
    public function pay(Cart $cart): bool;
}

// Format a price in euros — €.
function format_price(float $amount): string
{
    return number_format($amount, 2) . " €";
}
